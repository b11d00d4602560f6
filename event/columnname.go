package event

import (
	"strings"
	"unicode/utf8"
)

// MaxColumnNameLen is BigQuery's column-name limit in bytes.
const MaxColumnNameLen = 128

// reservedColumnPrefixes are the prefixes BigQuery reserves for its own
// pseudo-columns. They are matched case-sensitively, as Logflare does.
var reservedColumnPrefixes = [...]string{
	"_TABLE_", "_FILE_", "_PARTITION", "_ROW_TIMESTAMP", "__ROOT__",
	"_COLIDENTIFIER", "_CHANGE_SEQUENCE_NUMBER", "_CHANGE_TYPE", "_CHANGE_TIMESTAMP",
}

// columnNameByte marks [A-Za-z0-9_].
var columnNameByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['_'] = true
	return t
}()

// IsSafeColumnName reports whether BigQueryColumnName leaves key unchanged.
func IsSafeColumnName(key string) bool {
	if len(key) == 0 {
		return true
	}
	if len(key) > MaxColumnNameLen || (key[0] >= '0' && key[0] <= '9') {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !columnNameByte[key[i]] {
			return false
		}
	}
	return !hasReservedPrefix(key)
}

func hasReservedPrefix(key string) bool {
	if len(key) == 0 || key[0] != '_' {
		return false
	}
	for _, p := range reservedColumnPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// BigQueryColumnName renames an object key to BigQuery column rules, as
// Logflare does at every depth of every event (docs/compat/logflare.md §4.3):
//
//   - a safe key ([A-Za-z0-9_] only, no leading digit, no reserved prefix, at
//     most 128 bytes; also "") is returned unchanged;
//   - otherwise every '-' becomes '_', and every other code point outside
//     [A-Za-z0-9_] (each invalid UTF-8 byte counts as one) becomes '_';
//   - then one '_' is prepended for each rule that fired: reserved prefix,
//     contained a '-', contained another illegal character, leading digit (the
//     digit rule does not fire when the prefix or dash rule did);
//   - a result longer than 128 bytes is cut to 128 and gets one more '_';
//   - a result that starts with a reserved prefix gets one more '_' (Logflare
//     stops before this rule, leaving a name BigQuery refuses).
func BigQueryColumnName(key string) string {
	if IsSafeColumnName(key) {
		return key
	}
	reserved := hasReservedPrefix(key)
	var dash, illegal bool
	body := make([]byte, 0, len(key)+4)
	for i := 0; i < len(key); {
		c := key[i]
		if columnNameByte[c] {
			body = append(body, c)
			i++
			continue
		}
		if c == '-' {
			dash = true
		} else {
			illegal = true
		}
		body = append(body, '_')
		if c < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(key[i:])
			i += size
		}
	}
	digit := key[0] >= '0' && key[0] <= '9' && !reserved && !dash
	prefix := 0
	for _, fired := range [...]bool{reserved, dash, illegal, digit} {
		if fired {
			prefix++
		}
	}
	out := make([]byte, 0, prefix+len(body)+1)
	for range prefix {
		out = append(out, '_')
	}
	out = append(out, body...)
	if len(out) > MaxColumnNameLen {
		// Everything is ASCII by now, so a byte cut cannot split a character.
		out = append([]byte{'_'}, out[:MaxColumnNameLen]...)
	}
	// The rules can make a reserved prefix where there was none ("PARTITION:"
	// becomes "_PARTITION_"), a name BigQuery would refuse: one more '_'
	// for each time that happens (at most twice: "__ROOT__" starts with '_').
	for hasReservedPrefix(string(out)) {
		out = append([]byte{'_'}, out...)
	}
	return string(out)
}
