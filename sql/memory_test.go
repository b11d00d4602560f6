package sql

// testRun is a query run with a memory limit and no pool, for operator
// tests and benchmarks.
func testRun(limit int64) *queryRun {
	q := &queryRun{}
	q.mem.limit = limit
	return q
}
