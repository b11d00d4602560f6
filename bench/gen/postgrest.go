package gen

// postgREST.logs.prod: PostgREST server logs. Self-hosted, Vector keeps the
// message after PostgREST's "<time>: " prefix and takes the time from it
// (whole seconds). A line without that prefix fails the transform and is
// forwarded as it came: raw message, docker time, no metadata.

var postgrestMessages = newChoice(
	weighted[string]{24, "Connection %U is available"},
	weighted[string]{24, "Connection %U is used"},
	weighted[string]{8, "Connection %U is established"},
	weighted[string]{5, "Connection %U is terminated due to max idletime"},
	weighted[string]{3, "Connection %U is terminated due to max lifetime"},
	weighted[string]{4, "Schema cache queried in %D milliseconds"},
	weighted[string]{4, "Schema cache loaded 23 Relations, 19 Relationships, 42 Functions, 0 Domain Representations, 4 Media Type Handlers, 1196 Timezones"},
	weighted[string]{4, "Config reloaded"},
	weighted[string]{3, "Schema cache loaded"},
	weighted[string]{2, "Listening on port 3000"},
	weighted[string]{2, "Attempting to connect to the database..."},
	weighted[string]{2, "Successfully connected to PostgreSQL 15.8 on aarch64-unknown-linux-gnu, compiled by gcc (GCC) 13.2.0, 64-bit"},
	weighted[string]{2, "Connection successful"},
	weighted[string]{2, `Listening for notifications on the "pgrst" channel`},
	weighted[string]{1, "Starting PostgREST 12.2.3..."},
	weighted[string]{1, "Connection Pool initialized with a maximum size of 10 connections"},
	weighted[string]{1, "An error ocurred when trying to query database settings for the config parameters"},
	weighted[string]{1, `Failed listening for notifications on the "pgrst" channel. connection to server at "db" (172.18.0.3), port 5432 failed: Connection refused`},
)

func (g *Generator) appendPostgREST(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	platform := g.opts.Shape == Platform
	if !platform && r.intn(100) < 3 {
		// An unprefixed line (a request log) that Vector forwards unparsed.
		dst = append(dst, `{"appname":"supabase-rest",`...)
		dst = g.appendMessageKey(dst)
		dst = append(dst, `"172.18.0.1 - anon [`...)
		dst = appendNginxAccessTime(dst, g.cal.at(ts))
		dst = append(dst, `] \"GET /`...)
		dst = append(dst, g.table()...)
		dst = append(dst, `?select=* HTTP/1.1\" 200 - \"\" \"node\"","project":"default"`...)
		dst = g.appendTimestamp(dst, ts, digitsVector)
		return append(dst, '}')
	}
	if platform {
		dst = append(dst, '{')
	} else {
		dst = append(dst, `{"appname":"supabase-rest",`...)
	}
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	msg := postgrestMessages.pick(r)
	for i := 0; i < len(msg); i++ {
		if msg[i] == '%' && i+1 < len(msg) {
			switch msg[i+1] {
			case 'U':
				// PostgREST's pool connection ids: a few per project.
				dst = appendUUIDBits(dst, finalize(p.userSeed+uint64(r.intn(10))), p.userSeed)
				i++
				continue
			case 'D':
				dst = appendInt(dst, 2+r.intn(60))
				dst = append(dst, '.')
				dst = appendInt(dst, r.intn(10))
				i++
				continue
			}
		}
		if msg[i] == '"' {
			dst = append(dst, '\\')
		}
		dst = append(dst, msg[i])
	}
	dst = append(dst, `","metadata":{"host":"`...)
	if platform {
		dst = append(dst, p.dbHost...)
	} else {
		dst = append(dst, "default"...)
	}
	dst = append(dst, `"},"project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, '"')
	native := digitsSeconds
	if platform {
		native = digitsPlatform
	}
	dst = g.appendTimestamp(dst, ts, native)
	return append(dst, '}')
}
