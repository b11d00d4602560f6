package gen

import (
	"math"
	"math/bits"
	"testing"
)

// TestVocabularyNeedsNoEscaping: generators append these strings to JSON
// unescaped, so none may contain a byte JSON requires escaping.
func TestVocabularyNeedsNoEscaping(t *testing.T) {
	var all []string
	add := func(s ...string) { all = append(all, s...) }
	for _, u := range userAgents.items {
		add(u.ua, u.clientInfo, u.http)
	}
	for _, l := range locations.items {
		add(l.country, l.colo, l.city, l.region, l.timezone, l.v6)
	}
	add(serverLocations...)
	add(tableNames...)
	add(columnNames...)
	add(rpcNames...)
	add(bucketNames...)
	add(fileStems...)
	for _, e := range fileExts.items {
		add(e[0], e[1])
	}
	add(functionNames...)
	add(functionRegions...)
	add(appWords...)
	add(refererPaths...)
	add(dbUsers.items...)
	add(firstNames...)
	add(mailDomains...)
	for _, k := range kongErrors.items {
		add(k.severity, k.text)
	}
	add(acceptJSON.items...)
	add(acceptBrowser)
	add(cacheStatuses.items...)
	add(grantTypes.items...)
	for _, p := range authOtherPaths.items {
		add(p[0], p[1])
	}
	add(oauthProviders...)
	add(imageWidths...)
	add(shutdownReasons...)
	add(consoleLevels.items...)
	for _, m := range realtimeMessages.items {
		add(m.level, m.text, m.module, m.function, m.code)
	}
	add(realtimeRaw...)
	for _, s := range storageSystem.items {
		add(s[0], s[1])
	}
	for _, r := range authRoutes.items {
		add(r.method, r.path)
	}
	for _, a := range authActions.items {
		add(a.action, a.logType, a.method, a.path)
	}
	add(authProviders.items...)
	for _, e := range authErrors.items {
		add(e.code, e.text, e.method, e.path)
	}
	add(pgExtensions...)
	add(pgSpecialBackends[:]...)
	for _, s := range all {
		for i := 0; i < len(s); i++ {
			if needsEscape[s[i]] {
				t.Errorf("%q needs escaping at byte %d", s, i)
			}
		}
	}
}

// TestZipf: the guide table gives exactly the binary-search answer, and
// the draw follows 1/(rank+1).
func TestZipf(t *testing.T) {
	for _, n := range []int{1, 2, 3, 100, 512, 1000} {
		z := newZipf(n)
		r := newRNG(uint64(n))
		counts := make([]int, n)
		const draws = 50000
		for range draws {
			u := r
			k := z.pick(&r)
			x, _ := bits.Mul64(u.next(), z.cum[n-1])
			want := 0
			for z.cum[want] <= x {
				want++
			}
			if k != want {
				t.Fatalf("n=%d: pick %d, linear search %d", n, k, want)
			}
			counts[k]++
		}
		h := 0.0
		for k := range n {
			h += 1 / float64(k+1)
		}
		for _, k := range []int{0, 1, n / 2} {
			if k >= n {
				continue
			}
			want := draws / (float64(k+1) * h)
			if math.Abs(float64(counts[k])-want) > 5*math.Sqrt(want)+1 {
				t.Errorf("n=%d rank %d: %d draws, want about %.0f", n, k, counts[k], want)
			}
		}
	}
}

// TestChoiceWeights: draws follow the weights.
func TestChoiceWeights(t *testing.T) {
	c := newChoice(weighted[string]{700, "a"}, weighted[string]{200, "b"}, weighted[string]{100, "c"})
	r := newRNG(1)
	counts := map[string]int{}
	for range 100000 {
		counts[c.pick(&r)]++
	}
	for k, want := range map[string]int{"a": 70000, "b": 20000, "c": 10000} {
		if math.Abs(float64(counts[k]-want)) > 800 {
			t.Errorf("%s drawn %d times, want about %d", k, counts[k], want)
		}
	}
}

func TestAppendEscaped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{`a "quoted" \ path`, `a \"quoted\" \\ path`},
		{"line\nbreak\ttab\rret", `line\nbreak\ttab\rret`},
		{"\x00\x1f", `\u0000\u001f`},
		{"São Paulo", "São Paulo"},
	} {
		if got := string(appendEscaped(nil, tc.in)); got != tc.want {
			t.Errorf("appendEscaped(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTimeFormats(t *testing.T) {
	var cal calendar
	c := cal.at(1752148805_012345678) // 2025-07-10T12:00:05.012345678Z, a Thursday
	for _, tc := range []struct{ got, want string }{
		{string(appendRFC3339(nil, c, autoDigits)), "2025-07-10T12:00:05.012345678Z"},
		{string(appendRFC3339(nil, c, 3)), "2025-07-10T12:00:05.012Z"},
		{string(appendRFC3339(nil, c, 0)), "2025-07-10T12:00:05Z"},
		{string(appendNginxAccessTime(nil, c)), "10/Jul/2025:12:00:05 +0000"},
		{string(appendNginxErrorTime(nil, c)), "2025/07/10 12:00:05"},
		{string(appendPGTime(nil, c, 3)), "2025-07-10 12:00:05.012 UTC"},
		{string(appendHTTPDate(nil, c)), "Thu, 10 Jul 2025 12:00:05 GMT"},
		{string(appendRFC3339(nil, cal.at(1752148805_120000000), autoDigits)), "2025-07-10T12:00:05.120Z"},
		{string(appendRFC3339(nil, cal.at(1752148805_000120000), autoDigits)), "2025-07-10T12:00:05.000120Z"},
		{string(appendRFC3339(nil, cal.at(1752148805_000000000), autoDigits)), "2025-07-10T12:00:05Z"},
		{string(appendFixed5(nil, -4663330)), "-46.63330"},
		{string(appendFixed5(nil, 12345)), "0.12345"},
		{string(appendUUIDBits(nil, 0, 0)), "00000000-0000-4000-8000-000000000000"},
		{string(appendUUIDBits(nil, math.MaxUint64, math.MaxUint64)), "ffffffff-ffff-4fff-bfff-ffffffffffff"},
		{string(appendURLComponent(nil, "https://a.b/c d")), "https%3A%2F%2Fa.b%2Fc%20d"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
