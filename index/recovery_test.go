package index

import (
	"math/rand/v2"
	"testing"
)

// mergeTextRecovered is mergeTextPerm with the tokens to recover found
// by a TextRecovery given the values in merged row order, as a merge
// fills its column, and no Values: it returns the merged index, the one
// built from the permuted messages, and whether a recovery was planned.
func mergeTextRecovered(t *testing.T, msgs []string, parts int, perm []int, opts *BuilderOptions, planRows int) (merged, built *Index, planned bool) {
	t.Helper()
	out := make([]string, len(msgs))
	inputOf := make([]int, len(msgs)) // by merged row
	for k := 0; k < parts; k++ {
		for i := k * len(msgs) / parts; i < (k+1)*len(msgs)/parts; i++ {
			out[perm[i]], inputOf[perm[i]] = msgs[i], k
		}
	}
	built = buildWith(t, opts, func(b *Builder) { b.AddText("event_message", 0, strVec(out, 0)) })
	inputs := mappedTextInputs(t, msgs, parts, perm, opts)
	b := NewBuilder(opts)
	tr, err := b.PlanTextRecovery("event_message", inputs, uint32(planRows))
	if err != nil {
		t.Fatal(err)
	}
	for row, s := range out {
		if tr.Wants(inputOf[row]) {
			tr.Add(inputOf[row], uint32(row), s)
		}
	}
	b.AddStrings("other", 0, strVec(make([]string, len(msgs)), 0))
	if err := b.MergeTextRecovered("event_message", inputs, tr); err != nil {
		t.Fatal(err)
	}
	merged = writeAndOpen(t, b)
	return merged, built, tr != nil
}

// TestMergeTextRecoveredMatchesBuild: tokens frequent in a part but not
// overall get their rows from the values handed to a TextRecovery during
// the merge (no input's values are read afterwards), and the merged index
// is the one indexing the merged values builds. A recovery planned for
// another segment size is not used: such tokens stay frequent.
func TestMergeTextRecoveredMatchesBuild(t *testing.T) {
	msgs := edgeMessages(6000, 9)
	opts := &BuilderOptions{FrequentTokenShare: 1.0 / 40}
	for i := 0; i < 100; i++ { // 100 rows, all in the first part
		msgs[i] += " burst burst"
	}
	// 30 rows in parts 0-4, then 150 in part 5 (frequent there): 180 rows,
	// frequent overall, though the plan counts only part 5's.
	for i := 0; i < 3000; i += 100 {
		msgs[i] += " late"
	}
	for i := 3000; i < 3600; i += 4 {
		msgs[i] += " late"
	}
	perm := rand.New(rand.NewPCG(5, 3)).Perm(len(msgs))
	merged, built, planned := mergeTextRecovered(t, msgs, 10, perm, opts, len(msgs))
	if !planned {
		t.Fatal("no recovery planned: the case tests nothing")
	}
	assertSameTerms(t, merged, built)
	if g := tokenTerms(t, merged)["burst"]; g == nil || g.GetCardinality() != 100 {
		t.Fatalf("burst: %v, want 100 rows", g)
	}
	if g, ok := tokenTerms(t, merged)["late"]; !ok || g != nil {
		t.Fatalf("late: %v, want frequent", g)
	}

	// Planned for a segment of half the rows: a lower threshold, another
	// choice of tokens. The merge leaves the recovery aside.
	merged, _, _ = mergeTextRecovered(t, msgs, 10, perm, opts, len(msgs)/2)
	if g, ok := tokenTerms(t, merged)["burst"]; !ok || g != nil {
		t.Fatalf("burst with a recovery planned for another size: %v, want frequent", g)
	}
}

// TestPlanTextRecoveryNothingToRecover: inputs whose frequent tokens are
// frequent overall need no values read.
func TestPlanTextRecoveryNothingToRecover(t *testing.T) {
	msgs := edgeMessages(2000, 4)
	var inputs []MappedInput
	frequentInParts := 0
	for k := 0; k < 4; k++ {
		part := msgs[k*500 : (k+1)*500]
		ix := buildWith(t, nil, func(b *Builder) { b.AddText("event_message", 0, strVec(part, 0)) })
		for _, rows := range tokenTerms(t, ix) {
			if rows == nil {
				frequentInParts++
			}
		}
		inputs = append(inputs, MappedInput{Index: ix})
	}
	if frequentInParts == 0 {
		t.Fatal("no token frequent in a part: the case tests nothing")
	}
	tr, err := NewBuilder(nil).PlanTextRecovery("event_message", inputs, 2000)
	if err != nil {
		t.Fatal(err)
	}
	for k := range inputs {
		if tr.Wants(k) {
			t.Fatalf("input %d's values wanted, though every token is as frequent in the merge", k)
		}
	}
}
