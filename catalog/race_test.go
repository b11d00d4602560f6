//go:build race

package catalog

// raceEnabled: the race detector slows decoding about fifteenfold, so the
// exhaustive damage tests take a sample of offsets under it.
const raceEnabled = true
