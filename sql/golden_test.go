package sql_test

import "testing"

func TestGoldenBasic(t *testing.T) {
	golden(t, supabaseDB(t), "basic.txt")
}

func TestGoldenErrors(t *testing.T) {
	golden(t, supabaseDB(t), "errors.txt")
}

// TestGoldenPlans pins what the optimiser does with Studio's query shapes:
// time bounds and predicates pushed into scans, newest-first scans that
// stop early, counts from indexes, unread columns dropped.
func TestGoldenPlans(t *testing.T) {
	db := supabaseDB(t)
	goldenWith(t, db, "plans.txt", db.plan)
}
