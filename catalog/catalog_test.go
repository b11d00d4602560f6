package catalog

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/internal/vfs"
)

// testOpts returns options with a fixed clock and sequential UUIDs.
func testOpts(fs vfs.FS) *Options {
	var mu sync.Mutex
	n := 0
	return &Options{
		FS:  fs,
		Now: func() time.Time { return time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC) },
		NewUUID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		},
	}
}

func openMem(t *testing.T, fs *vfs.MemFS) *Catalog {
	t.Helper()
	c, err := Open("/data", testOpts(fs))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func validationFields(t *testing.T, err error) map[string][]string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	return ve.Fields
}

func TestSourceCRUD(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	s, err := c.CreateSource(SourceParams{Name: ptr("app.logs"), RetentionDays: ptr(7), Description: ptr("d")})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 1 || s.Token != "00000000-0000-4000-8000-000000000001" || s.RetentionDays != 7 || s.Description != "d" {
		t.Fatalf("created %+v", s)
	}
	if c.SourceByToken(s.Token) != s || c.SourceByName("app.logs") != s || c.SourceByID(1) != s || !c.HasSourceName("app.logs") {
		t.Fatal("lookups do not find the new source")
	}
	if c.SourceByName("App.logs") != nil {
		t.Fatal("names are case-sensitive")
	}
	u, err := c.UpdateSource(s.Token, SourceParams{DropLQL: ptr("m.level:debug"), Name: ptr("app2")})
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "app2" || u.DropLQL != "m.level:debug" || u.RetentionDays != 7 || u.Token != s.Token {
		t.Fatalf("updated %+v", u)
	}
	if s.Name != "app.logs" {
		t.Fatal("update modified the published value")
	}
	if c.SourceByName("app.logs") != nil || c.SourceByName("app2") != u {
		t.Fatal("name index not updated")
	}
	if _, err := c.UpdateSource("00000000-0000-4000-8000-999999999999", SourceParams{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}
	d, err := c.DeleteSource(s.Token)
	if err != nil || d.ID != 1 {
		t.Fatalf("delete: %v %+v", err, d)
	}
	if c.SourceByToken(s.Token) != nil || len(c.Sources()) != 0 {
		t.Fatal("source still there after delete")
	}
	if _, err := c.DeleteSource(s.Token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// Ids are never reused.
	s2, _ := c.CreateSource(SourceParams{Name: ptr("x")})
	if s2.ID != 2 {
		t.Fatalf("id reused: %d", s2.ID)
	}
}

func TestSourceValidation(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	cases := []struct {
		name  string
		p     SourceParams
		field string
		msg   string
	}{
		{"no name", SourceParams{}, "name", "can't be blank"},
		{"blank name", SourceParams{Name: ptr("  ")}, "name", "can't be blank"},
		{"backtick", SourceParams{Name: ptr("a`b")}, "name", "has invalid format"},
		{"long name", SourceParams{Name: ptr(strings.Repeat("a", 257))}, "name", "should be at most 256 character(s)"},
		{"negative retention", SourceParams{Name: ptr("a"), RetentionDays: ptr(-1)}, "retention_days", "must be greater than or equal to 0"},
		{"negative disk cap", SourceParams{Name: ptr("a"), MaxDiskBytes: ptr(int64(-1))}, "max_disk_bytes", "must be greater than or equal to 0"},
		{"bad lql", SourceParams{Name: ptr("a"), DropLQL: ptr("m.status:>")}, "drop_lql_string", ""},
		{"sort key not a path", SourceParams{Name: ptr("a"), SortKey: ptr("project name")}, "sort_key", ""},
		{"sort key timestamp", SourceParams{Name: ptr("a"), SortKey: ptr("timestamp")}, "sort_key", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateSource(tc.p)
			f := validationFields(t, err)
			if len(f[tc.field]) == 0 || (tc.msg != "" && f[tc.field][0] != tc.msg) {
				t.Fatalf("errors %v, want %s: %q", f, tc.field, tc.msg)
			}
		})
	}
	if len(c.Sources()) != 0 {
		t.Fatal("an invalid source was stored")
	}
}

// TestSourceSortKey: the sort key is set, cleared and kept across a
// restart, and a catalog without one (written before it existed) reads.
func TestSourceSortKey(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	s, err := c.CreateSource(SourceParams{Name: ptr("edge"), SortKey: ptr(" metadata.project_ref ")})
	if err != nil || s.SortKey != "metadata.project_ref" {
		t.Fatalf("created %+v: %v", s, err)
	}
	plain, _ := c.CreateSource(SourceParams{Name: ptr("plain")})
	if plain.SortKey != "" {
		t.Fatalf("default sort key %q", plain.SortKey)
	}
	c = openMem(t, fs.CrashClone())
	if got := c.SourceByName("edge").SortKey; got != "metadata.project_ref" {
		t.Fatalf("after a restart: %q", got)
	}
	data, _ := vfs.ReadFile(fs, "/data/catalog.json")
	if !strings.Contains(string(data), `"sort_key": "metadata.project_ref"`) || strings.Count(string(data), `"sort_key"`) != 1 {
		t.Fatalf("the file should name the one sort key set:\n%s", data)
	}
	u, err := c.UpdateSource(s.Token, SourceParams{SortKey: ptr("")})
	if err != nil || u.SortKey != "" {
		t.Fatalf("cleared: %+v %v", u, err)
	}
}

// TestSourceMaxDiskBytes: a source's size cap is set, kept across a
// restart, cleared with 0, and absent from the file when unset.
func TestSourceMaxDiskBytes(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	s, err := c.CreateSource(SourceParams{Name: ptr("capped"), MaxDiskBytes: ptr(int64(10 << 30))})
	if err != nil || s.MaxDiskBytes != 10<<30 {
		t.Fatalf("created %+v: %v", s, err)
	}
	plain, _ := c.CreateSource(SourceParams{Name: ptr("plain")})
	if plain.MaxDiskBytes != 0 {
		t.Fatalf("default cap %d", plain.MaxDiskBytes)
	}
	c = openMem(t, fs.CrashClone())
	if got := c.SourceByName("capped").MaxDiskBytes; got != 10<<30 {
		t.Fatalf("after a restart: %d", got)
	}
	data, _ := vfs.ReadFile(fs, "/data/catalog.json")
	if !strings.Contains(string(data), `"max_disk_bytes": 10737418240`) || strings.Count(string(data), `"max_disk_bytes"`) != 1 {
		t.Fatalf("the file should name the one cap set:\n%s", data)
	}
	// An update that leaves it out keeps it; 0 clears it.
	u, err := c.UpdateSource(s.Token, SourceParams{Description: ptr("d")})
	if err != nil || u.MaxDiskBytes != 10<<30 {
		t.Fatalf("kept: %+v %v", u, err)
	}
	u, err = c.UpdateSource(s.Token, SourceParams{MaxDiskBytes: ptr(int64(0))})
	if err != nil || u.MaxDiskBytes != 0 {
		t.Fatalf("cleared: %+v %v", u, err)
	}
}

func TestSourceByNamePicksFirstCreated(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	a, _ := c.CreateSource(SourceParams{Name: ptr("dup")})
	b, _ := c.CreateSource(SourceParams{Name: ptr("dup")})
	for range 5 {
		if got := c.SourceByName("dup"); got.ID != a.ID {
			t.Fatalf("got id %d, want %d", got.ID, a.ID)
		}
	}
	if _, err := c.DeleteSource(a.Token); err != nil {
		t.Fatal(err)
	}
	if got := c.SourceByName("dup"); got.ID != b.ID {
		t.Fatalf("after delete got id %d, want %d", got.ID, b.ID)
	}
}

func TestEndpointDefaultsAndValidation(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	c.SetSQLValidator(func(q string) error {
		if strings.Contains(q, "*") {
			return errors.New("restricted wildcard (*) in a result column")
		}
		return nil
	})
	e, err := c.CreateEndpoint(EndpointParams{Name: ptr("e1"), Query: ptr("select 1 as a")})
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoint{
		ID: 1, Token: e.Token, Name: "e1", Query: "select 1 as a", Language: "bq_sql",
		CacheDurationSeconds: 3600, ProactiveRequeryingSeconds: 1800, MaxLimit: 1000,
		EnableAuth: true, InsertedAt: e.InsertedAt, UpdatedAt: e.UpdatedAt,
	}
	if !reflect.DeepEqual(*e, want) {
		t.Fatalf("got %+v\nwant %+v", *e, want)
	}
	cases := []struct {
		name  string
		p     EndpointParams
		field string
		msg   string
	}{
		{"no name", EndpointParams{Query: ptr("select 1 as a")}, "name", "can't be blank"},
		{"taken", EndpointParams{Name: ptr("e1"), Query: ptr("select 1 as a")}, "name", "has already been taken"},
		{"no query", EndpointParams{Name: ptr("e2")}, "query", "can't be blank"},
		{"bad sql", EndpointParams{Name: ptr("e2"), Query: ptr("select * from x")}, "query", "restricted wildcard (*) in a result column"},
		{"bad lql", EndpointParams{Name: ptr("e2"), Query: ptr("m.a:>"), Language: ptr("lql")}, "query", ""},
		{"language", EndpointParams{Name: ptr("e2"), Query: ptr("select 1 as a"), Language: ptr("pg_sql")}, "language", "is invalid"},
		{"max_limit 0", EndpointParams{Name: ptr("e2"), Query: ptr("select 1 as a"), MaxLimit: ptr(0)}, "max_limit", "must be greater than or equal to 1"},
		{"max_limit 10001", EndpointParams{Name: ptr("e2"), Query: ptr("select 1 as a"), MaxLimit: ptr(10001)}, "max_limit", "must be less than or equal to 10000"},
		{"cache", EndpointParams{Name: ptr("e2"), Query: ptr("select 1 as a"), CacheDurationSeconds: ptr(-1)}, "cache_duration_seconds", "must be greater than or equal to 0"},
		{"requery", EndpointParams{Name: ptr("e2"), Query: ptr("select 1 as a"), ProactiveRequeryingSeconds: ptr(-5)}, "proactive_requerying_seconds", "must be greater than or equal to 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateEndpoint(tc.p)
			f := validationFields(t, err)
			if len(f[tc.field]) == 0 || (tc.msg != "" && f[tc.field][0] != tc.msg) {
				t.Fatalf("errors %v, want %s: %q", f, tc.field, tc.msg)
			}
		})
	}
	for _, ok := range []EndpointParams{
		{Name: ptr("lim1"), Query: ptr("select 1 as a"), MaxLimit: ptr(1)},
		{Name: ptr("lim10000"), Query: ptr("select 1 as a"), MaxLimit: ptr(10000), CacheDurationSeconds: ptr(0)},
		{Name: ptr("lql"), Query: ptr("m.status:500"), Language: ptr("lql")},
	} {
		if _, err := c.CreateEndpoint(ok); err != nil {
			t.Fatalf("%s: %v", *ok.Name, err)
		}
	}
	// An update not touching the query does not re-validate it.
	c.SetSQLValidator(func(string) error { return errors.New("everything is wrong") })
	u, err := c.UpdateEndpoint(e.Token, EndpointParams{Description: ptr("x"), Sandboxable: ptr(true)})
	if err != nil || !u.Sandboxable || u.Description != "x" || u.Query != e.Query {
		t.Fatalf("update: %v %+v", err, u)
	}
	if _, err := c.UpdateEndpoint(e.Token, EndpointParams{Query: ptr("select 2 as b")}); validationFields(t, err)["query"][0] != "everything is wrong" {
		t.Fatal("query update not validated")
	}
	// Renaming onto another endpoint's name is refused; keeping one's own is fine.
	if _, err := c.UpdateEndpoint(e.Token, EndpointParams{Name: ptr("lql")}); validationFields(t, err)["name"][0] != msgTaken {
		t.Fatal("rename onto a taken name accepted")
	}
	if _, err := c.UpdateEndpoint(e.Token, EndpointParams{Name: ptr("e1")}); err != nil {
		t.Fatal(err)
	}
	if c.EndpointByName("e1").Token != e.Token || c.EndpointByToken(e.Token).Name != "e1" || c.EndpointByID(e.ID) == nil {
		t.Fatal("lookups")
	}
	if _, err := c.DeleteEndpoint(e.Token); err != nil || c.EndpointByName("e1") != nil {
		t.Fatalf("delete: %v", err)
	}
}

func TestPersistenceRoundTrip(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	s, _ := c.CreateSource(SourceParams{Name: ptr("a"), RetentionDays: ptr(3), DropLQL: ptr("-m.x:1"), CustomEventMessageKeys: ptr("m.a, b")})
	e, _ := c.CreateEndpoint(EndpointParams{Name: ptr("ep"), Query: ptr("select 1 as a"), Labels: ptr("k=v"), SourceMapping: map[string]string{"a": s.Token}, RedactPII: ptr(true)})
	tok, err := c.CreateAccessToken("secret-key-1", []string{"ingest", "query:endpoint:1"}, "api", "for tests")
	if err != nil {
		t.Fatal(err)
	}

	c2 := openMem(t, fs.CrashClone())
	if got := c2.SourceByToken(s.Token); !reflect.DeepEqual(got, s) {
		t.Fatalf("source after reopen %+v, want %+v", got, s)
	}
	if got := c2.EndpointByToken(e.Token); !reflect.DeepEqual(got, e) {
		t.Fatalf("endpoint after reopen %+v, want %+v", got, e)
	}
	if got := c2.Authenticate("secret-key-1"); got == nil || !reflect.DeepEqual(got, tok) {
		t.Fatalf("token after reopen %+v, want %+v", got, tok)
	}
	// Ids continue after the stored ones.
	s2, _ := c2.CreateSource(SourceParams{Name: ptr("b")})
	if s2.ID != 2 {
		t.Fatalf("next id %d", s2.ID)
	}
	// The key is not on disk, only its digest.
	data, err := vfs.ReadFile(fs, filepath.Join("/data", FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret-key-1") {
		t.Fatal("access token key stored in clear")
	}
	if !strings.Contains(string(data), `"format": 2`) {
		t.Fatal("no format version in the file")
	}
}

// TestCrashAtEveryWrite cuts the file system after each change: the
// reopened catalog has exactly the changes that returned.
func TestCrashAtEveryWrite(t *testing.T) {
	fs := vfs.NewMemFS()
	c := openMem(t, fs)
	var names []string
	for i := range 6 {
		name := fmt.Sprintf("s%d", i)
		if _, err := c.CreateSource(SourceParams{Name: &name}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		re := openMem(t, fs.CrashClone())
		var got []string
		for _, s := range re.Sources() {
			got = append(got, s.Name)
		}
		if !reflect.DeepEqual(got, names) {
			t.Fatalf("after crash: %v, want %v", got, names)
		}
	}
}

// TestErrorAtEveryOp fails the i-th file operation of a change: the change
// reports the error and is neither visible nor (after reopen) stored.
func TestErrorAtEveryOp(t *testing.T) {
	for i := int64(1); ; i++ {
		mem := vfs.NewMemFS()
		base := openMem(t, mem)
		if _, err := base.CreateSource(SourceParams{Name: ptr("before")}); err != nil {
			t.Fatal(err)
		}
		efs := &vfs.ErrorFS{FS: mem}
		c, err := Open("/data", testOpts(efs))
		if err != nil {
			t.Fatalf("op %d: open: %v", i, err)
		}
		efs.FailAt = efs.Ops() + i
		_, err = c.CreateSource(SourceParams{Name: ptr("after")})
		if err == nil {
			if i == 1 {
				t.Fatal("no operation could fail")
			}
			return
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("op %d: %v", i, err)
		}
		if c.SourceByName("after") != nil {
			t.Fatalf("op %d: failed change visible", i)
		}
		re := openMem(t, mem.CrashClone())
		if re.SourceByName("after") != nil || re.SourceByName("before") == nil {
			t.Fatalf("op %d: stored state wrong after failed change", i)
		}
	}
}

func TestOpenRejectsCorruptFiles(t *testing.T) {
	cases := map[string]string{
		"not json":          "{",
		"future version":    `{"format": 99}`,
		"zero version":      `{"format": 0}`,
		"dup source id":     `{"format":1,"next_source_id":5,"sources":[{"id":1,"token":"00000000-0000-4000-8000-000000000001","name":"a"},{"id":1,"token":"00000000-0000-4000-8000-000000000002","name":"b"}]}`,
		"id past next":      `{"format":1,"next_source_id":1,"sources":[{"id":1,"token":"00000000-0000-4000-8000-000000000001","name":"a"}]}`,
		"bad token":         `{"format":1,"next_source_id":2,"sources":[{"id":1,"token":"nope","name":"a"}]}`,
		"no source token":   `{"format":1,"next_source_id":2,"sources":[{"id":1,"name":"a"}]}`,
		"no endpoint token": `{"format":1,"next_endpoint_id":2,"endpoints":[{"id":1,"name":"a"}]}`,
		"dup ep name":       `{"format":1,"next_endpoint_id":3,"endpoints":[{"id":1,"token":"00000000-0000-4000-8000-000000000001","name":"a"},{"id":2,"token":"00000000-0000-4000-8000-000000000002","name":"a"}]}`,
		"bad digest":        `{"format":1,"next_token_id":2,"access_tokens":[{"id":1,"sha256":"xyz","scopes":["public"]}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMemFS()
			if err := fs.MkdirAll("/data"); err != nil {
				t.Fatal(err)
			}
			if err := vfs.WriteFileAtomic(fs, "/data/"+FileName, []byte(content)); err != nil {
				t.Fatal(err)
			}
			if _, err := Open("/data", testOpts(fs)); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestSubscribe(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	var got []string
	cancel := c.Subscribe(func(ch Change) {
		desc := ch.Kind.String()
		if ch.Endpoint != nil {
			desc += " new=" + ch.Endpoint.Query
			// Readers see the change already.
			if c.EndpointByToken(ch.Endpoint.Token) != ch.Endpoint {
				t.Error("change not visible to readers during notification")
			}
		}
		if ch.OldEndpoint != nil {
			desc += " old=" + ch.OldEndpoint.Query
		}
		if ch.Source != nil {
			desc += " new=" + ch.Source.Name
		}
		if ch.OldSource != nil {
			desc += " old=" + ch.OldSource.Name
		}
		got = append(got, desc)
	})
	s, _ := c.CreateSource(SourceParams{Name: ptr("a")})
	_, _ = c.UpdateSource(s.Token, SourceParams{Name: ptr("b")})
	e, _ := c.CreateEndpoint(EndpointParams{Name: ptr("e"), Query: ptr("select 1 as x")})
	_, _ = c.UpdateEndpoint(e.Token, EndpointParams{Query: ptr("select 2 as x")})
	_, _ = c.CreateEndpoint(EndpointParams{Name: ptr("e")}) // invalid: no notification
	_, _ = c.DeleteEndpoint(e.Token)
	_, _ = c.DeleteSource(s.Token)
	_, _ = c.CreateAccessToken("k", []string{"public"}, "", "")
	cancel()
	_, _ = c.CreateSource(SourceParams{Name: ptr("after-cancel")})
	want := []string{
		"source_created new=a",
		"source_updated new=b old=a",
		"endpoint_created new=select 1 as x",
		"endpoint_updated new=select 2 as x old=select 1 as x",
		"endpoint_deleted old=select 2 as x",
		"source_deleted old=b",
		"tokens_changed",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

// TestConcurrentReadersAndWriters runs lookups while sources are created
// and renamed (meaningful under -race).
func TestConcurrentReadersAndWriters(t *testing.T) {
	c := openMem(t, vfs.NewMemFS())
	s, _ := c.CreateSource(SourceParams{Name: ptr("stable")})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c.SourceByToken(s.Token) == nil || c.SourceByName("stable") == nil {
					t.Error("stable source vanished")
					return
				}
				_ = c.Sources()
			}
		}()
	}
	for i := range 50 {
		name := fmt.Sprintf("n%d", i)
		if _, err := c.CreateSource(SourceParams{Name: &name}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if len(c.Sources()) != 51 {
		t.Fatalf("%d sources", len(c.Sources()))
	}
}
