package gen

// pgbouncer.logs.prod: PgBouncer logs. Self-hosted Supabase ships none; both
// shapes follow Logflare's seed sample (self-hosted with project "default").

var pgbouncerMessages = newChoice(
	weighted[int]{25, 0}, // login attempt
	weighted[int]{22, 1}, // client close request
	weighted[int]{15, 2}, // new connection to server
	weighted[int]{10, 3}, // server idle timeout
	weighted[int]{12, 4}, // stats
	weighted[int]{4, 5},  // client unexpected eof
	weighted[int]{3, 6},  // server lifetime over
	weighted[int]{3, 7},  // password authentication failed
	weighted[int]{2, 8},  // pooler error: password authentication failed
	weighted[int]{1, 9},  // no more connections allowed
)

func (g *Generator) appendPgBouncer(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	user := dbUsers.pick(r)
	dst = append(dst, '{')
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	kind := pgbouncerMessages.pick(r)
	client := kind != 2 && kind != 3 && kind != 6
	if kind != 4 {
		if client {
			dst = append(dst, "C-0x"...)
			dst = append(dst, "55d1c2"...)
		} else {
			dst = append(dst, "S-0x"...)
			dst = append(dst, "aaab05"...)
		}
		dst = appendHex(dst, r.next(), 6)
		dst = append(dst, ": postgres/"...)
		dst = append(dst, user...)
		dst = append(dst, '@')
		if client {
			dst = appendIPv4(dst, 10<<24|uint32(r.intn(1<<24)))
			dst = append(dst, ':')
			dst = appendInt(dst, 32768+r.intn(28000))
		} else {
			dst = append(dst, "127.0.0.1:5432"...)
		}
		dst = append(dst, ' ')
	}
	switch kind {
	case 0:
		dst = append(dst, "login attempt: db=postgres user="...)
		dst = append(dst, user...)
		dst = append(dst, " tls=no"...)
	case 1:
		dst = append(dst, "closing because: client close request (age="...)
		dst = appendInt(dst, r.intn(600))
		dst = append(dst, "s)"...)
	case 2:
		dst = append(dst, "new connection to server (from 127.0.0.1:"...)
		dst = appendInt(dst, 32768+r.intn(28000))
		dst = append(dst, ')')
	case 3:
		dst = append(dst, "closing because: server idle timeout (age="...)
		dst = appendInt(dst, 600+r.intn(60))
		dst = append(dst, "s)"...)
	case 4:
		x := 1 + r.intn(200)
		dst = append(dst, "stats: "...)
		dst = appendInt(dst, x)
		dst = append(dst, " xacts/s, "...)
		dst = appendInt(dst, x*(1+r.intn(4)))
		dst = append(dst, " queries/s, in "...)
		dst = appendInt(dst, x*(100+r.intn(400)))
		dst = append(dst, " B/s, out "...)
		dst = appendInt(dst, x*(300+r.intn(3000)))
		dst = append(dst, " B/s, xact "...)
		dst = appendInt(dst, 200+r.intn(20000))
		dst = append(dst, " us, query "...)
		dst = appendInt(dst, 100+r.intn(5000))
		dst = append(dst, " us, wait "...)
		dst = appendInt(dst, r.intn(300))
		dst = append(dst, " us"...)
	case 5:
		dst = append(dst, "closing because: client unexpected eof (age="...)
		dst = appendInt(dst, r.intn(3600))
		dst = append(dst, "s)"...)
	case 6:
		dst = append(dst, "closing because: server lifetime over (age=3600s)"...)
	case 7:
		dst = append(dst, "closing because: password authentication failed (age=0s)"...)
	case 8:
		dst = append(dst, "pooler error: password authentication failed"...)
	default:
		dst = append(dst, "pooler error: no more connections allowed (max_client_conn)"...)
	}
	dst = append(dst, `","metadata":{"host":"`...)
	dst = append(dst, p.dbHost...)
	dst = append(dst, `"},"project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, '"')
	dst = g.appendTimestamp(dst, ts, g.nativeDigits())
	return append(dst, '}')
}
