package fuzz

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/internal/vfs"
	"github.com/sediment/sediment/query/endpoints"
)

var (
	localOnce sync.Once
	localSvc  *endpoints.Service
	localErr  error
)

// openLocalService is a query service over the exec data set (source
// "src") with an endpoint "ep" whose CTE reads it, for the local query
// tool's target.
func openLocalService() (*endpoints.Service, error) {
	localOnce.Do(func() {
		db, err := openExecDB()
		if err != nil {
			localErr = err
			return
		}
		cat, err := catalog.Open("/cat", &catalog.Options{FS: vfs.NewMemFS(), NewUUID: idSeq()})
		if err != nil {
			localErr = err
			return
		}
		name, query := "src", "with picked as (select t.id, t.timestamp, t.status from src t where t.status >= @min) select id from picked"
		if _, localErr = cat.CreateSource(catalog.SourceParams{Name: &name}); localErr != nil {
			return
		}
		ep := "ep"
		if _, localErr = cat.CreateEndpoint(catalog.EndpointParams{Name: &ep, Query: &query}); localErr != nil {
			return
		}
		localSvc = endpoints.New(db.eng, cat, &endpoints.Options{DisableBackground: true, QueryTimeout: 10 * time.Second, QueryMemory: 64 << 20})
	})
	return localSvc, localErr
}

// FuzzQueryLocal feeds any text to the local query tool's path (star
// expansion over sources, CTEs and subqueries, an endpoint's WITH clause,
// validation, execution): errors are fine, panics are not.
func FuzzQueryLocal(f *testing.F) {
	for _, s := range []string{
		"select * from src",
		"select * except (metadata) from src order by timestamp limit 3",
		"select t.* from src t where t.status = 500",
		"select x.* from src t",
		"with x as (select id, status as s from src) select * from x where s > 200",
		"with recursive r as (select * from r) select * from r",
		"select * from (select * from (select id from src)) a, unnest([1,2]) as n with offset as o",
		"select (select count(*) from (select * from src)) as n",
		"select * from src a join src b on a.id = b.id limit 2",
		"select * from picked",
		"select 1 union all select * from src",
		"select * except (nope) from src",
		"select *",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, q string, underEndpoint bool) {
		if len(q) > 512 {
			t.Skip()
		}
		svc, err := openLocalService()
		if err != nil {
			t.Fatal(err)
		}
		o := endpoints.LocalOptions{MaxRows: 50, Params: map[string]string{"min": "200"}}
		if underEndpoint {
			o.Endpoint = "ep"
		}
		checkAlloc(t, allocLimit(len(q)), func() {
			_, _ = svc.QueryLocal(context.Background(), q, o)
		})
	})
}
