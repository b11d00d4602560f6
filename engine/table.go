package engine

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/segment"
	"github.com/sediment/sediment/sql/scan"
)

// part is one piece of a snapshot that a scan reads: a segment or a head
// view. Its index in the snapshot's part list is carried by RowRefs.
type part struct {
	id     int
	seg    *segRef
	hv     *headView
	byPath map[string][]colRef // scalar, object and array columns by path
}

func (p *part) timeRange() (int64, int64) {
	if p.seg != nil {
		return p.seg.r.TimeRange()
	}
	return p.hv.minTime, p.hv.maxTime
}

func indexColumns(cols []colRef) map[string][]colRef {
	m := make(map[string][]colRef, len(cols))
	for _, c := range cols {
		m[c.path] = append(m[c.path], c)
	}
	return m
}

// parts returns the snapshot's parts, built once.
func (sn *Snapshot) partList() []*part {
	sn.partsOnce.Do(func() {
		// Parts wholly past retention are left out (retentionview.go).
		for _, sg := range sn.segs {
			if _, maxT := sg.r.TimeRange(); maxT < sn.cutoff {
				continue
			}
			sg.colsOnce.Do(func() { sg.byPath = indexColumns(segColumns(sg)) })
			sn.parts = append(sn.parts, &part{id: len(sn.parts), seg: sg, byPath: sg.byPath})
		}
		for _, hv := range sn.heads {
			if hv.rows == 0 || hv.maxTime < sn.cutoff {
				continue
			}
			sn.parts = append(sn.parts, &part{id: len(sn.parts), hv: hv, byPath: indexColumns(headColumns(hv))})
		}
	})
	return sn.parts
}

// Table returns the snapshot as a scan.Table named name.
func (sn *Snapshot) Table(name string) scan.Table { return &table{name: name, sn: sn} }

type table struct {
	name string
	sn   *Snapshot
}

func (t *table) Name() string { return t.name }

func (t *table) Schema() *scan.Schema { return t.sn.Schema() }

// Schema returns the union of the fields of every part, computed once,
// leaving out columns that hold values only in rows past retention
// (retentionview.go).
//
// A path's query type widens over the physical types seen: BOOL, INT64,
// FLOAT64 alone stay themselves; INT64 with FLOAT64 reads as FLOAT64; any
// other mix reads as STRING (numbers and booleans as their text), so no
// value is lost and every row answers.
func (sn *Snapshot) Schema() *scan.Schema {
	sn.schemaOnce.Do(func() {
		type acc struct {
			types  typeSet
			record bool
			array  bool
			elems  map[string]*typeSet
			erecs  map[string]bool
		}
		fields := map[string]*acc{}
		get := func(p string) *acc {
			a := fields[p]
			if a == nil {
				a = &acc{}
				fields[p] = a
			}
			return a
		}
		base := []scan.Field{
			{Path: "timestamp", Type: vec.Timestamp},
			{Path: "id", Type: vec.String},
			{Path: "event_message", Type: vec.String},
		}
		addElems := func(a *acc, elems []segment.ElemField) {
			if a.elems == nil {
				a.elems, a.erecs = map[string]*typeSet{}, map[string]bool{}
			}
			for _, ef := range elems {
				if ef.Type == segment.TypeObject {
					a.erecs[ef.Path] = true
					continue
				}
				ts := a.elems[ef.Path]
				if ts == nil {
					ts = &typeSet{}
					a.elems[ef.Path] = ts
				}
				ts.add(ef.Type)
				// Parents of nested element fields are records.
				for i := 0; i < len(ef.Path); i++ {
					if ef.Path[i] == '.' {
						a.erecs[ef.Path[:i]] = true
					}
				}
			}
		}
		for _, p := range sn.partList() {
			live := p.liveColumns(sn.cutoff)
			for path, cols := range p.byPath {
				var a *acc
				for _, c := range cols {
					if live != nil && !live[c.idx] {
						continue
					}
					if a == nil {
						a = get(path)
					}
					switch c.typ {
					case segment.TypeObject:
						a.record = true
					case segment.TypeArray:
						a.array = true
						if p.seg != nil {
							addElems(a, p.seg.r.Columns()[c.idx].Elem)
						} else {
							addElems(a, p.hv.cols[c.idx].elem)
						}
					default:
						a.types.add(c.typ)
					}
				}
				if a == nil {
					continue // only in rows past retention
				}
				for i := 0; i < len(path); i++ {
					if path[i] == '.' {
						get(path[:i]).record = true
					}
				}
			}
		}
		s := &scan.Schema{Fields: map[string]*scan.Field{}}
		for i := range base {
			f := base[i]
			s.Fields[f.Path] = &f
		}
		for path, a := range fields {
			if path == "timestamp" || path == "id" || path == "event_message" {
				continue
			}
			f := &scan.Field{Path: path, Type: a.types.queryType(), Record: a.record, Array: a.array}
			if a.array {
				for ep, ts := range a.elems {
					if ep == "" {
						f.ElemType = ts.queryType()
						continue
					}
					f.ElemFields = append(f.ElemFields, scan.Field{Path: ep, Type: ts.queryType(), Record: a.erecs[ep]})
				}
				for ep := range a.erecs {
					if a.elems[ep] == nil {
						f.ElemFields = append(f.ElemFields, scan.Field{Path: ep, Record: true})
					}
				}
				sort.Slice(f.ElemFields, func(i, j int) bool { return f.ElemFields[i].Path < f.ElemFields[j].Path })
			}
			s.Fields[path] = f
		}
		sn.schema = s
	})
	return sn.schema
}

// typeSet records which scalar types a path held.
type typeSet struct{ b, i, f, s, ts bool }

func (t *typeSet) add(c segment.ColType) {
	switch c {
	case segment.TypeBool:
		t.b = true
	case segment.TypeInt64:
		t.i = true
	case segment.TypeFloat64:
		t.f = true
	case segment.TypeString:
		t.s = true
	case segment.TypeTimestamp:
		t.ts = true
	}
}

func (t *typeSet) queryType() vec.Type {
	switch {
	case t.ts && !t.b && !t.i && !t.f && !t.s:
		return vec.Timestamp
	case t.s || t.ts:
		return vec.String
	case t.b && (t.i || t.f):
		return vec.String
	case t.b:
		return vec.Bool
	case t.f:
		return vec.Float64
	case t.i:
		return vec.Int64
	}
	return vec.Unknown
}

// snapshotState holds lazily built query structures of a Snapshot.
type snapshotState struct {
	partsOnce  sync.Once
	parts      []*part
	schemaOnce sync.Once
	schema     *scan.Schema
}

// Open starts a scan (see scan.Table).
func (t *table) Open(ctx context.Context, req *scan.Request) (scan.Scan, error) {
	return openScan(ctx, t.sn, req, t.name)
}

// hasPrefixPath reports whether path is prefix or below it.
func hasPrefixPath(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix) && len(path) > len(prefix) && path[len(prefix)] == '.'
}
