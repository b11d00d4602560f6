package index

import (
	"math"
	"strings"
)

// A token an input of a merge kept no postings for (frequent there) but
// that is not frequent in the merged segment needs its rows found in that
// input's values (recoverRows). Reading those values again once the merge
// is over decoded every such input's text column a second time: about
// half of recoverRows' time, the other half tokenising them (issue 14).
// The merge decodes every input value anyway to write the merged column,
// so a TextRecovery planned before the merge is handed those values as
// they go by (Add) and keeps the rows of the tokens wanted, numbered in
// the merged segment; MergeTextRecovered then takes them instead of
// reading the inputs' values.
//
// The plan reads each input's terms once, before the merge, and cannot
// know a token's count in the inputs it read before the token turned up
// frequent in a later one: it may keep rows of a token that turns out
// frequent in the merged segment (then unused). MergeText decides exactly
// as without a recovery which tokens get rows; it takes a token's rows
// from the recovery only when every input the token is frequent in was
// scanned for it.

// TextRecovery collects, while a merge produces its rows, the rows of the
// tokens of one text field that MergeText would recover from the inputs'
// values. It is not safe for concurrent use.
type TextRecovery struct {
	// frequent is the count past which a token is frequent in the merged
	// segment, as the plan computed it: MergeTextRecovered uses the
	// recovery only if the builder agrees.
	frequent uint64
	inputs   []recoveryInput
	terms    map[string]*recoveredTerm
}

// recoveryInput is what is looked for in one input's values.
type recoveryInput struct {
	filter *tokenFilter
	want   map[string]*recoveredTerm // nil: nothing (the input is not scanned)
}

// recoveredTerm is a token's rows found so far in the merged segment.
type recoveredTerm struct {
	key  string
	rows rowList
	// lastRow is the merged row last added plus one (0: none), so that a
	// token twice in a value counts once.
	lastRow uint32
	// card bounds the token's count in the inputs from the one it was
	// first frequent in on (the plan's running sum).
	card uint64
}

// PlanTextRecovery prepares the recovery of the text field path's tokens
// for a merge of inputs (Index only: the RowMaps are not needed) into a
// segment of rows rows. It returns nil when no input's values need
// scanning. The merge then calls Add with every value of every input
// Wants, each merged row once, before MergeTextRecovered.
func (b *Builder) PlanTextRecovery(path string, inputs []MappedInput, rows uint32) (*TextRecovery, error) {
	tr := &TextRecovery{
		frequent: frequentCount(max(uint64(b.rows), uint64(rows)), b.opts.FrequentTokenShare),
		inputs:   make([]recoveryInput, len(inputs)),
		terms:    map[string]*recoveredTerm{},
	}
	for k, in := range inputs {
		if in.Index == nil || !in.Index.Has(path, kindToken) {
			continue
		}
		f, t, err := in.Index.lookupOnce(path, kindToken)
		if err != nil {
			return nil, err
		}
		if f == nil || t == nil {
			continue
		}
		ri := &tr.inputs[k]
		for i := range t.strs {
			rt := tr.terms[t.strs[i]]
			if t.pk[i] == postFrequent {
				if rt == nil {
					rt = &recoveredTerm{key: strings.Clone(t.strs[i])}
					tr.terms[rt.key] = rt
				}
				if ri.want == nil {
					ri.want = map[string]*recoveredTerm{}
				}
				ri.want[rt.key] = rt // the clone: not pinning the decoded terms
			}
			if rt != nil {
				rt.card = min(rt.card+uint64(t.card[i]), math.MaxUint32)
			}
		}
	}
	// A token already counted past the merged threshold is frequent there
	// whatever the inputs read before held: not looked for.
	for tok, rt := range tr.terms {
		if rt.card > tr.frequent {
			delete(tr.terms, tok)
		}
	}
	scanned := 0
	for k := range tr.inputs {
		ri := &tr.inputs[k]
		for tok, rt := range ri.want {
			if tr.terms[tok] != rt {
				delete(ri.want, tok)
			}
		}
		if len(ri.want) == 0 {
			ri.want = nil
			continue
		}
		ri.filter = new(tokenFilter)
		for tok := range ri.want {
			ri.filter.add(tok)
		}
		scanned++
	}
	if scanned == 0 {
		return nil, nil
	}
	return tr, nil
}

// Wants reports whether input k's values are to be given to Add.
func (tr *TextRecovery) Wants(k int) bool {
	return tr != nil && k >= 0 && k < len(tr.inputs) && tr.inputs[k].want != nil
}

// Add looks for the wanted tokens in s, input k's value that became row
// row of the merged segment. Each merged row must be given once.
func (tr *TextRecovery) Add(k int, row uint32, s string) {
	ri := &tr.inputs[k]
	ri.filter.tokens(s, func(tok string) {
		if rt := ri.want[tok]; rt != nil && rt.lastRow != row+1 {
			rt.lastRow = row + 1
			rt.rows.add(row)
		}
	})
}

// covers reports whether the recovery scanned every input of ks (those
// the token key is frequent in) for key, and returns its rows.
func (tr *TextRecovery) covers(key string, ks []int) (*recoveredTerm, bool) {
	rt := tr.terms[key]
	if rt == nil {
		return nil, false
	}
	for _, k := range ks {
		if k < 0 || k >= len(tr.inputs) || tr.inputs[k].want[key] != rt {
			return nil, false
		}
	}
	return rt, true
}
