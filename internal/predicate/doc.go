// Package predicate is the one implementation of what a filter means on a
// value: ordered comparisons (with IEEE NaN rules), SQL LIKE, regular
// expressions (RE2, as BigQuery's) with the literal analysis that lets a
// substring search or a token index stand in for the regex engine, and
// substring tests with and without case.
//
// Three layers apply these to different shapes of data, and must agree on
// every value, or a pushed-down filter returns other rows than the
// evaluator would:
//
//   - one event: lql's matcher (ingest drop rules, live tail);
//   - one storage block: the engine's pushed-down filters, which also use
//     Like.Required and Regex.Required to ask the token index, and Holds on
//     block minima and maxima;
//   - one result batch: sql/fn's comparison, LIKE, REGEXP_CONTAINS and
//     CONTAINS_SUBSTR kernels.
//
// NULL is not a value here: every caller decides NULL before it asks (a
// NULL operand makes a comparison NULL, which filters drop; IS NULL is the
// caller's own test). The package knows nothing of vectors, events or
// columns, so that each layer may use it.
package predicate
