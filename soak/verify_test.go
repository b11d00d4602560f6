//go:build soak && linux

package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sediment/sediment/bench/gen"
)

// The final check reads every id of every source back through the
// restarted server (GET /api/query, ad-hoc SQL, in pages ordered by id)
// and compares them with what each request was answered:
//
//   - every acknowledged event inside retention is there exactly once;
//   - no event of the retention source stamped before its cutoff is
//     visible, acknowledged or not;
//   - no event the server refused (429, 503, 507) is there: a client that
//     sends it again would store it twice;
//   - events without an answer (the server was killed) may or may not be
//     there, once at most;
//   - every id is one the harness sent, in the source it was sent to.

// pageRows is the page size of the listing: GET /api/query's row cap.
const pageRows = 1000

// verifyCounts is the outcome of the final check.
type verifyCounts struct {
	Read           int64 `json:"ids_read"`
	Acked          int64 `json:"acknowledged_inside_retention"`
	AckedOld       int64 `json:"acknowledged_old"`
	Found          int64 `json:"acknowledged_found"`
	Lost           int64 `json:"lost"`
	Duplicated     int64 `json:"duplicated"`
	RetentionLeaks int64 `json:"old_events_visible"`
	RefusedStored  int64 `json:"refused_but_stored"`
	RejectedStored int64 `json:"rejected_but_stored"`
	InDoubt        int64 `json:"in_doubt"`
	InDoubtStored  int64 `json:"in_doubt_stored"`
	Foreign        int64 `json:"foreign_ids"`
	WrongSource    int64 `json:"in_wrong_source"`
	Queries        int64 `json:"listing_queries"`
	SecondsToRead  int64 `json:"seconds_to_read"`
}

// sqlIDs runs an ad-hoc query returning an id column and returns the ids.
func (h *harness) sqlIDs(ctx context.Context, base, sql string) ([]string, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/query?"+url.Values{"sql": {sql}}.Encode(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("X-API-KEY", h.privateKey)
		res, err := h.queryClient.Do(req)
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		if res.StatusCode == http.StatusTooManyRequests && attempt < 30 {
			wait, _ := retryAfter(res.Header)
			sleepCtx(ctx, max(wait, time.Second))
			continue
		}
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("HTTP %d: %s", res.StatusCode, snippet(body))
		}
		var ans struct {
			Result []struct {
				ID string `json:"id"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &ans); err != nil {
			return nil, fmt.Errorf("%v: %s", err, snippet(body))
		}
		if len(ans.Error) > 0 && string(ans.Error) != "null" {
			return nil, fmt.Errorf("query error: %s", errorText(ans.Error))
		}
		ids := make([]string, len(ans.Result))
		for i, r := range ans.Result {
			ids[i] = r.ID
		}
		return ids, nil
	}
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// listIDs calls fn with every id of source name, in id order, each copy
// of an id once: pages of `id >= last`, where the copies of last a page
// starts with that the previous page already counted are skipped.
func (h *harness) listIDs(ctx context.Context, base, name string, counts *verifyCounts, fn func(id string)) error {
	last, tail := "", 0 // the previous page's last id, and its copies there
	for {
		q := fmt.Sprintf("select id from `%s` where id >= %s order by id limit %d", name, sqlString(last), pageRows)
		ids, err := h.sqlIDs(ctx, base, q)
		counts.Queries++
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		i := 0
		for skip := tail; i < len(ids) && skip > 0 && ids[i] == last; skip-- {
			i++
		}
		for _, id := range ids[i:] {
			fn(id)
		}
		if len(ids) < pageRows {
			return nil
		}
		newLast := ids[len(ids)-1]
		if newLast == last || ids[0] == newLast {
			return fmt.Errorf("%s: a page of %d copies of id %s: cannot page past it", name, len(ids), newLast)
		}
		n := 0
		for j := len(ids) - 1; j >= 0 && ids[j] == newLast; j-- {
			n++
		}
		last, tail = newLast, n
	}
}

// verifyAll reads every source back and compares with the ledger.
func (h *harness) verifyAll(ctx context.Context, base string) verifyCounts {
	var c verifyCounts
	start := time.Now()
	marks := make([][]uint8, len(h.streams))
	seen := make([][]uint8, len(h.streams))
	for i, st := range h.streams {
		marks[i] = st.snapshot()
		seen[i] = make([]uint8, len(marks[i]))
	}
	for _, src := range gen.AllSources() {
		err := h.listIDs(ctx, base, src.Name(), &c, func(id string) {
			c.Read++
			ref, ok := parseEventID(id)
			if !ok || ref.run != h.run || int(ref.stream) < 1 || int(ref.stream) > len(h.streams) || ref.seq >= uint64(len(marks[ref.stream-1])) {
				c.Foreign++
				h.fails.add("verify: unknown id", "%s holds id %q, which the harness never sent", src.Name(), id)
				return
			}
			if ref.src != src {
				c.WrongSource++
				h.fails.add("verify: event in the wrong source", "%s holds %s, sent to %s", src.Name(), id, ref.src.Name())
			}
			s := &seen[ref.stream-1][ref.seq]
			if *s < 255 {
				*s++
			}
		})
		if err != nil {
			h.fails.add("verify: listing failed", "%v", err)
		}
	}
	for i, ms := range marks {
		for seq, m := range ms {
			st, old, n := sendState(m&markStateMask), m&markOld != 0, seen[i][seq]
			id := func() string {
				src := gen.Source(m & markSrcMask >> markSrcShift)
				return fmt.Sprintf("%s (%s)", appendEventID(nil, eventRef{run: h.run, stream: uint16(i + 1), src: src, old: old, seq: uint64(seq)}), src.Name())
			}
			if n > 1 {
				c.Duplicated += int64(n - 1)
				h.fails.add("verify: duplicated", "%s is there %d times", id(), n)
			}
			if old {
				if st == stateAcked {
					c.AckedOld++
				}
				if n > 0 {
					c.RetentionLeaks++
					h.fails.add("verify: old event visible", "%s is stamped %s ago, past the source's retention, and a query still returns it", id(), oldAge)
				}
				continue
			}
			switch st {
			case stateAcked:
				c.Acked++
				if n == 0 {
					c.Lost++
					h.fails.add("verify: acknowledged event lost", "%s was acknowledged (200) and is not there", id())
				} else {
					c.Found++
				}
			case stateRefused:
				if n > 0 {
					c.RefusedStored++
					h.fails.add("verify: refused event stored", "%s was refused (429/503/507) and is there: sent again it would be stored twice", id())
				}
			case stateRejected:
				if n > 0 {
					c.RejectedStored++
				}
			case stateInDoubt:
				c.InDoubt++
				if n > 0 {
					c.InDoubtStored++
				}
			case stateNone:
				h.fails.add("verify: harness bug", "sequence %d of stream %d never settled", seq, i+1)
			}
		}
	}
	c.SecondsToRead = int64(time.Since(start).Seconds())
	return c
}

// spotCheck reads back, right after a restart, the newest acknowledged
// events of every stream and source (those most likely only in the
// write-ahead log when the server died) and returns how many it checked
// and how many are missing.
func (h *harness) spotCheck(ctx context.Context, label string) (checked, missing int) {
	base, _, ok := h.srv.waitUp(ctx)
	if !ok {
		return 0, 0
	}
	for _, src := range gen.AllSources() {
		var want []string
		for _, st := range h.streams {
			want = append(want, st.lastAcked(h.run, src, 100)...)
		}
		for len(want) > 0 {
			chunk := want[:min(len(want), 500)]
			want = want[len(chunk):]
			quoted := make([]string, len(chunk))
			for i, id := range chunk {
				quoted[i] = sqlString(id)
			}
			ids, err := h.sqlIDs(ctx, base, fmt.Sprintf("select id from `%s` where id in (%s) limit %d", src.Name(), strings.Join(quoted, ","), pageRows))
			if err != nil {
				if ctx.Err() == nil {
					h.fails.add("spot check: query failed", "%s, %s: %v", label, src.Name(), err)
				}
				return checked, missing
			}
			got := map[string]int{}
			for _, id := range ids {
				got[id]++
			}
			for _, id := range chunk {
				checked++
				switch got[id] {
				case 0:
					missing++
					h.fails.add("spot check: acknowledged event missing", "%s: %s (%s) acknowledged before, not there after", label, id, src.Name())
				case 1:
				default:
					h.fails.add("spot check: duplicated", "%s: %s (%s) is there %d times", label, id, src.Name(), got[id])
				}
			}
		}
	}
	return checked, missing
}
