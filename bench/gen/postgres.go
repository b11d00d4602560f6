package gen

import "strconv"

// postgres.logs: database server log lines.
//
// Self-hosted events are the text lines of the supabase-db container as
// Vector ships them: "<time> UTC [<pid>] <SEVERITY>:  <message>", with
// metadata.parsed holding only error_severity (Vector's regex capture) and
// timestamp. An ERROR is often followed by its DETAIL and STATEMENT lines,
// which Vector ships as separate events whose severity falls back to LOG.
// Platform events carry the message alone and the csvlog fields in
// metadata.parsed.

// pgSession is one backend process: the per-connection fields of csvlog.
type pgSession struct {
	pid     int
	start   int64 // ns
	line    int
	user    string
	app     string
	from    string // "host:port" of the client
	backend int    // backend id, the first half of virtual transaction ids
	lxid    int
}

// pgFollow is a DETAIL or STATEMENT line queued after an ERROR.
type pgFollow struct {
	label string // "DETAIL" or "STATEMENT"
	text  []byte
	pid   int
}

type postgresState struct {
	sessions [256]pgSession
	special  [4]pgSession // checkpointer, autovacuum, pg_cron, walsender
	follow   [2]pgFollow  // queued lines, read from follow[head]
	nfollow  int
	head     int
	cronJob  int
	txid     int
	detail   []byte
	query    []byte
}

// Special backends.
const (
	pgCheckpointer = iota
	pgAutovacuum
	pgCron
	pgWalsender
)

var pgSpecialBackends = [4]string{"checkpointer", "autovacuum worker", "pg_cron launcher", "walsender"}

func (s *postgresState) init(r *rng, now int64) {
	for i := range s.sessions {
		s.newSession(r, &s.sessions[i], now-int64(r.intn(7200))*1e9, i)
	}
	for i := range s.special {
		ss := &s.special[i]
		s.newSession(r, ss, now-int64(3*86400+r.intn(86400))*1e9, 200+i)
		ss.user, ss.app, ss.from = "", "", ""
	}
	s.special[pgCron].user = "postgres"
	s.special[pgWalsender].user = "supabase_admin"
	s.special[pgWalsender].app = "realtime_rls"
	s.special[pgWalsender].from = "10.0.0.1:38412"
	s.cronJob = 1 + r.intn(5)
	s.txid = 700 + r.intn(50000)
}

// appNames by database role.
func pgAppFor(user string, r *rng) string {
	switch user {
	case "authenticator":
		return "PostgREST 12.2.3"
	case "supabase_auth_admin":
		return "gotrue"
	case "supabase_storage_admin":
		return "storage-api"
	case "supabase_realtime_admin":
		return "realtime_connect"
	case "pgbouncer":
		return "pgbouncer"
	case "postgres":
		return [...]string{"supabase/dashboard", "psql", "Supavisor", "postgres_exporter", "prisma"}[r.intn(5)]
	}
	return "postgres-meta 0.84.2"
}

func (s *postgresState) newSession(r *rng, ss *pgSession, start int64, slot int) {
	ss.pid = 100 + r.intn(60000)
	ss.start = start
	ss.line = 0
	ss.user = dbUsers.pick(r)
	ss.app = pgAppFor(ss.user, r)
	b := appendIPv4(nil, dockerIP(2+r.intn(20)))
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(32768+r.intn(28000)), 10)
	ss.from = string(b)
	ss.backend = 1 + slot%120
	ss.lxid = r.intn(100000)
}

// pgMsg is one kind of log message.
type pgMsg struct {
	sev     string
	state   string // SQLSTATE
	tag     string // command tag
	special int    // -1 for a client backend, else a special backend
	// connect marks "connection received", which starts a new session.
	connect bool
	write   func(g *Generator, dst []byte, s *pgSession) []byte
}

var pgMessages = newChoice(
	// LOG ~86%
	weighted[pgMsg]{2200, pgMsg{"LOG", "00000", "SELECT", -1, false, pgDuration}},
	weighted[pgMsg]{900, pgMsg{"LOG", "00000", "", -1, true, pgConnReceived}},
	weighted[pgMsg]{900, pgMsg{"LOG", "00000", "authentication", -1, false, pgConnAuthorized}},
	weighted[pgMsg]{850, pgMsg{"LOG", "00000", "idle", -1, false, pgDisconnection}},
	weighted[pgMsg]{500, pgMsg{"LOG", "00000", "", pgCron, false, pgCronStart}},
	weighted[pgMsg]{500, pgMsg{"LOG", "00000", "", pgCron, false, pgCronDone}},
	weighted[pgMsg]{400, pgMsg{"LOG", "00000", "INSERT", -1, false, pgStatement}},
	weighted[pgMsg]{300, pgMsg{"LOG", "00000", "", pgAutovacuum, false, pgAutoVacuum}},
	weighted[pgMsg]{300, pgMsg{"LOG", "00000", "", pgAutovacuum, false, pgAutoAnalyze}},
	weighted[pgMsg]{250, pgMsg{"LOG", "00000", "START_REPLICATION", pgWalsender, false, pgLogicalDecoding}},
	weighted[pgMsg]{150, pgMsg{"LOG", "00000", "", pgCheckpointer, false, pgCheckpointStart}},
	weighted[pgMsg]{150, pgMsg{"LOG", "00000", "", pgCheckpointer, false, pgCheckpointDone}},
	weighted[pgMsg]{120, pgMsg{"LOG", "08006", "idle", -1, false, pgConnReset}},
	weighted[pgMsg]{80, pgMsg{"LOG", "08P01", "idle in transaction", -1, false, pgUnexpectedEOF}},
	// ERROR ~7%
	weighted[pgMsg]{150, pgMsg{"ERROR", "23505", "INSERT", -1, false, pgDuplicateKey}},
	weighted[pgMsg]{120, pgMsg{"ERROR", "42P01", "SELECT", -1, false, pgNoRelation}},
	weighted[pgMsg]{100, pgMsg{"ERROR", "57014", "SELECT", -1, false, pgStatementTimeout}},
	weighted[pgMsg]{80, pgMsg{"ERROR", "42501", "INSERT", -1, false, pgRLSViolation}},
	weighted[pgMsg]{60, pgMsg{"ERROR", "42501", "SELECT", -1, false, pgPermissionDenied}},
	weighted[pgMsg]{60, pgMsg{"ERROR", "42703", "SELECT", -1, false, pgNoColumn}},
	weighted[pgMsg]{50, pgMsg{"ERROR", "22P02", "SELECT", -1, false, pgInvalidUUID}},
	weighted[pgMsg]{40, pgMsg{"ERROR", "23502", "INSERT", -1, false, pgNotNull}},
	weighted[pgMsg]{40, pgMsg{"ERROR", "42883", "SELECT", -1, false, pgNoFunction}},
	// WARNING ~3%
	weighted[pgMsg]{180, pgMsg{"WARNING", "01000", "SELECT", -1, false, pgBouncerAuth}},
	weighted[pgMsg]{120, pgMsg{"WARNING", "25P01", "COMMIT", -1, false, pgNoTransaction}},
	// FATAL ~2%
	weighted[pgMsg]{80, pgMsg{"FATAL", "28P01", "authentication", -1, false, pgPasswordFailed}},
	weighted[pgMsg]{50, pgMsg{"FATAL", "57P01", "idle", -1, false, pgAdminTerminated}},
	weighted[pgMsg]{40, pgMsg{"FATAL", "53300", "startup", -1, false, pgTooManyConnections}},
	weighted[pgMsg]{30, pgMsg{"FATAL", "25P03", "idle in transaction", -1, false, pgIdleTxTimeout}},
	// NOTICE ~1.2%
	weighted[pgMsg]{70, pgMsg{"NOTICE", "42P07", "CREATE TABLE", -1, false, pgAlreadyExists}},
	weighted[pgMsg]{50, pgMsg{"NOTICE", "42710", "CREATE EXTENSION", -1, false, pgExtensionExists}},
	// INFO ~0.8%
	weighted[pgMsg]{79, pgMsg{"INFO", "00000", "VACUUM", -1, false, pgVacuumVerbose}},
	// PANIC, very rare
	weighted[pgMsg]{1, pgMsg{"PANIC", "53100", "", pgCheckpointer, false, pgDiskFull}},
)

var pgStatements = []string{
	`SELECT "public"."%T".* FROM "public"."%T" WHERE "public"."%T"."id" = $1`,
	`select * from public.%T where user_id = $1 order by created_at desc limit 20`,
	`insert into public.%T (name, user_id) values ($1, $2) returning *`,
	`update public.%T set status = $1, updated_at = now() where id = $2`,
	`delete from public.%T where id = $1`,
	`WITH pgrst_source AS ( SELECT "public"."%T".* FROM "public"."%T" LIMIT $1 OFFSET $2 ) SELECT count(*) FROM pgrst_source`,
	`select set_config('search_path', $1, true), set_config('role', $2, true), set_config('request.jwt.claims', $3, true)`,
}

var cronCommands = []string{
	"SELECT net.http_post(url:='https://hooks.example.com/daily', body:='{}'::jsonb)",
	"CALL public.cleanup_expired_sessions()",
	"DELETE FROM public.events WHERE created_at < now() - interval '30 days'",
	"SELECT public.refresh_materialized_views()",
	"VACUUM ANALYZE public.messages",
}

// appendSQL writes a statement template with %T replaced by a table name.
func appendSQL(dst []byte, tmpl, table string) []byte {
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '%' && i+1 < len(tmpl) && tmpl[i+1] == 'T' {
			dst = append(dst, table...)
			i++
			continue
		}
		dst = append(dst, tmpl[i])
	}
	return dst
}

func pgDuration(g *Generator, dst []byte, s *pgSession) []byte {
	ms := originTimes.draw(&g.r)*7 + g.r.intn(1000)
	dst = append(dst, "duration: "...)
	dst = appendInt(dst, ms/1000)
	dst = append(dst, '.')
	dst = append(dst, byte('0'+ms/100%10), byte('0'+ms/10%10), byte('0'+ms%10))
	dst = append(dst, " ms  statement: "...)
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[g.r.intn(len(pgStatements))], g.table())
	return append(dst, g.pg.query...)
}

func pgStatement(g *Generator, dst []byte, s *pgSession) []byte {
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[2+g.r.intn(3)], g.table())
	return append(append(dst, "statement: "...), g.pg.query...)
}

func pgConnReceived(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, "connection received: host="...)
	host, port, _ := cut(s.from, ':')
	dst = append(dst, host...)
	dst = append(dst, " port="...)
	return append(dst, port...)
}

func pgConnAuthorized(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, "connection authorized: user="...)
	dst = append(dst, s.user...)
	dst = append(dst, " database=postgres application_name="...)
	dst = append(dst, s.app...)
	if g.r.intn(10) < 3 {
		dst = append(dst, " SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)"...)
	}
	return dst
}

func pgDisconnection(g *Generator, dst []byte, s *pgSession) []byte {
	ms := g.r.intn(3600 * 1000)
	dst = append(dst, "disconnection: session time: "...)
	dst = appendInt(dst, ms/3600000)
	dst = append(dst, ':')
	dst = append2(dst, ms/60000%60)
	dst = append(dst, ':')
	dst = append2(dst, ms/1000%60)
	dst = append(dst, '.')
	dst = append(dst, byte('0'+ms/100%10), byte('0'+ms/10%10), byte('0'+ms%10))
	dst = append(dst, " user="...)
	dst = append(dst, s.user...)
	dst = append(dst, " database=postgres host="...)
	host, port, _ := cut(s.from, ':')
	dst = append(dst, host...)
	dst = append(dst, " port="...)
	return append(dst, port...)
}

func pgCronStart(g *Generator, dst []byte, s *pgSession) []byte {
	g.pg.cronJob = 1 + (g.pg.cronJob+g.r.intn(3))%12
	dst = append(dst, "cron job "...)
	dst = appendInt(dst, g.pg.cronJob)
	dst = append(dst, " starting: "...)
	return append(dst, cronCommands[g.pg.cronJob%len(cronCommands)]...)
}

func pgCronDone(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, "cron job "...)
	dst = appendInt(dst, g.pg.cronJob)
	if g.r.intn(2) == 0 {
		return append(dst, " COMMAND completed: 1 row"...)
	}
	return append(dst, " completed: 1 row"...)
}

func pgAutoVacuum(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `automatic vacuum of table "postgres.public.`...)
	dst = append(dst, g.table()...)
	dst = append(dst, `": index scans: `...)
	return appendInt(dst, g.r.intn(2))
}

func pgAutoAnalyze(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `automatic analyze of table "postgres.public.`...)
	dst = append(dst, g.table()...)
	dst = append(dst, `" system usage: CPU: user: 0.0`...)
	dst = appendInt(dst, g.r.intn(10))
	return append(dst, ` s, system: 0.00 s, elapsed: 0.01 s`...)
}

func pgLogicalDecoding(g *Generator, dst []byte, s *pgSession) []byte {
	if g.r.intn(2) == 0 {
		return append(dst, `starting logical decoding for slot "supabase_realtime_replication_slot"`...)
	}
	dst = append(dst, "logical decoding found consistent point at 0/"...)
	return appendHex(dst, g.r.next(), 8)
}

func pgCheckpointStart(g *Generator, dst []byte, s *pgSession) []byte {
	if g.r.intn(10) == 0 {
		return append(dst, "checkpoint starting: immediate force wait"...)
	}
	return append(dst, "checkpoint starting: time"...)
}

func pgCheckpointDone(g *Generator, dst []byte, s *pgSession) []byte {
	r := &g.r
	buffers := 1 + r.intn(3000)
	dst = append(dst, "checkpoint complete: wrote "...)
	dst = appendInt(dst, buffers)
	dst = append(dst, " buffers ("...)
	dst = appendInt(dst, buffers/1638)
	dst = append(dst, '.')
	dst = appendInt(dst, buffers/164%10)
	dst = append(dst, "%); 0 WAL file(s) added, 0 removed, "...)
	dst = appendInt(dst, r.intn(4))
	dst = append(dst, " recycled; write="...)
	dst = appendInt(dst, buffers/100)
	dst = append(dst, '.')
	dst = append(dst, byte('0'+r.intn(10)), byte('0'+r.intn(10)), byte('0'+r.intn(10)))
	dst = append(dst, " s, sync=0.00"...)
	dst = appendInt(dst, 1+r.intn(9))
	dst = append(dst, " s, total="...)
	dst = appendInt(dst, buffers/100)
	dst = append(dst, '.')
	dst = append(dst, byte('0'+r.intn(10)), byte('0'+r.intn(10)), byte('0'+r.intn(10)))
	dst = append(dst, " s; sync files="...)
	dst = appendInt(dst, 1+r.intn(40))
	dst = append(dst, ", longest=0.00"...)
	dst = appendInt(dst, 1+r.intn(9))
	dst = append(dst, " s, average=0.001 s; distance="...)
	dst = appendInt(dst, buffers*8)
	dst = append(dst, " kB, estimate="...)
	return append(appendInt(dst, buffers*8+r.intn(4000)), " kB"...)
}

func pgConnReset(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "could not receive data from client: Connection reset by peer"...)
}

func pgUnexpectedEOF(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "unexpected EOF on client connection with an open transaction"...)
}

func pgDuplicateKey(g *Generator, dst []byte, s *pgSession) []byte {
	t := g.table()
	id := rowIDs.draw(&g.r)
	g.pg.detail = append(g.pg.detail[:0], "Key (id)=("...)
	g.pg.detail = append(appendInt(g.pg.detail, id), ") already exists."...)
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[2], t)
	dst = append(dst, `duplicate key value violates unique constraint "`...)
	return append(append(dst, t...), `_pkey"`...)
}

func pgNoRelation(g *Generator, dst []byte, s *pgSession) []byte {
	t := g.table()
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[1], t[:len(t)-1])
	dst = append(dst, `relation "public.`...)
	return append(append(dst, t[:len(t)-1]...), `" does not exist`...)
}

func pgStatementTimeout(g *Generator, dst []byte, s *pgSession) []byte {
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[5], g.table())
	return append(dst, "canceling statement due to statement timeout"...)
}

func pgRLSViolation(g *Generator, dst []byte, s *pgSession) []byte {
	t := g.table()
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[2], t)
	dst = append(dst, `new row violates row-level security policy for table "`...)
	return append(append(dst, t...), '"')
}

func pgPermissionDenied(g *Generator, dst []byte, s *pgSession) []byte {
	t := g.table()
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[1], t)
	return append(append(dst, "permission denied for table "...), t...)
}

func pgNoColumn(g *Generator, dst []byte, s *pgSession) []byte {
	t := g.table()
	col := columnNames[g.r.intn(len(columnNames))]
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[1], t)
	dst = append(dst, `column `...)
	dst = append(dst, t...)
	dst = append(dst, '.')
	dst = append(dst, col...)
	return append(dst, `_id does not exist`...)
}

func pgInvalidUUID(g *Generator, dst []byte, s *pgSession) []byte {
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[1], g.table())
	dst = append(dst, `invalid input syntax for type uuid: "`...)
	dst = appendInt(dst, rowIDs.draw(&g.r))
	return append(dst, '"')
}

func pgNotNull(g *Generator, dst []byte, s *pgSession) []byte {
	t := g.table()
	col := columnNames[1+g.r.intn(len(columnNames)-1)]
	g.pg.query = appendSQL(g.pg.query[:0], pgStatements[2], t)
	g.pg.detail = append(g.pg.detail[:0], "Failing row contains ("...)
	g.pg.detail = append(appendInt(g.pg.detail, rowIDs.draw(&g.r)), ", null, 2025-07-10 12:00:00+00)."...)
	dst = append(dst, `null value in column "`...)
	dst = append(dst, col...)
	dst = append(dst, `" of relation "`...)
	return append(append(dst, t...), `" violates not-null constraint`...)
}

func pgNoFunction(g *Generator, dst []byte, s *pgSession) []byte {
	fn := rpcNames[g.r.intn(len(rpcNames))]
	g.pg.query = append(append(append(g.pg.query[:0], "select public."...), fn...), "($1)"...)
	return append(append(append(dst, "function public."...), fn...), "(unknown) does not exist"...)
}

func pgBouncerAuth(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "PgBouncer auth request: "...) // user appended by the caller's session
}

func pgNoTransaction(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "there is no transaction in progress"...)
}

func pgPasswordFailed(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `password authentication failed for user "`...)
	return append(append(dst, s.user...), '"')
}

func pgAdminTerminated(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "terminating connection due to administrator command"...)
}

func pgTooManyConnections(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "remaining connection slots are reserved for non-replication superuser connections"...)
}

func pgIdleTxTimeout(g *Generator, dst []byte, s *pgSession) []byte {
	return append(dst, "terminating connection due to idle-in-transaction timeout"...)
}

func pgAlreadyExists(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `relation "`...)
	return append(append(dst, g.table()...), `" already exists, skipping`...)
}

var pgExtensions = []string{"pgcrypto", "uuid-ossp", "pg_net", "pg_graphql", "vector", "pg_stat_statements"}

func pgExtensionExists(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `extension "`...)
	return append(append(dst, pgExtensions[g.r.intn(len(pgExtensions))]...), `" already exists, skipping`...)
}

func pgVacuumVerbose(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `vacuuming "postgres.public.`...)
	return append(append(dst, g.table()...), '"')
}

func pgDiskFull(g *Generator, dst []byte, s *pgSession) []byte {
	dst = append(dst, `could not write to file "pg_wal/xlogtemp.`...)
	dst = appendInt(dst, s.pid)
	return append(dst, `": No space left on device`...)
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func (g *Generator) appendPostgres(dst []byte, ts int64) []byte {
	pg := &g.pg
	if g.opts.Shape == SelfHosted && pg.nfollow > 0 {
		f := &pg.follow[pg.head]
		pg.head++
		pg.nfollow--
		return g.appendPostgresSelfHosted(dst, ts, f.pid, f.label, "LOG", f.text)
	}
	pi := g.projects.pick(&g.r)
	m := pgMessages.pick(&g.r)
	var s *pgSession
	if m.special >= 0 {
		s = &pg.special[m.special]
	} else {
		slot := (pi*13 + g.r.intn(24)) % len(pg.sessions)
		s = &pg.sessions[slot]
		if m.connect {
			pg.newSession(&g.r, s, ts, slot)
		}
	}
	s.line++
	pg.detail, pg.query = pg.detail[:0], pg.query[:0]
	msg := m.write(g, g.scratch[:0], s)
	if m.state == "01000" { // PgBouncer auth request names the role asked about
		msg = append(msg, dbUsers.pick(&g.r)...)
	}
	g.scratch = msg
	if g.opts.Shape == Platform {
		return g.appendPostgresPlatform(dst, ts, pi, m, s, msg)
	}
	if m.sev == "ERROR" {
		pg.nfollow, pg.head = 0, 0
		if len(pg.detail) > 0 {
			pg.queueFollow("DETAIL", pg.detail, s.pid)
		}
		if len(pg.query) > 0 && g.r.intn(2) == 0 {
			pg.queueFollow("STATEMENT", pg.query, s.pid)
		}
	}
	return g.appendPostgresSelfHosted(dst, ts, s.pid, m.sev, m.sev, msg)
}

func (s *postgresState) queueFollow(label string, text []byte, pid int) {
	f := &s.follow[s.nfollow]
	f.label, f.text, f.pid = label, append(f.text[:0], text...), pid
	s.nfollow++
}

// appendPostgresSelfHosted writes "<time> UTC [pid] LABEL:  text" as Vector
// ships it; sev is what Vector's regex extracts.
func (g *Generator) appendPostgresSelfHosted(dst []byte, ts int64, pid int, label, sev string, text []byte) []byte {
	cv := g.cal.at(ts)
	dst = append(dst, `{"appname":"supabase-db",`...)
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = appendPGTime(dst, cv, 3)
	dst = append(dst, " ["...)
	dst = appendInt(dst, pid)
	dst = append(dst, "] "...)
	dst = append(dst, label...)
	dst = append(dst, ":  "...)
	dst = appendEscaped(dst, text)
	dst = append(dst, `","metadata":{"host":"db-default","parsed":{"error_severity":"`...)
	dst = append(dst, sev...)
	dst = append(dst, `","timestamp":"`...)
	dst = appendRFC3339(dst, cv, digitsVector)
	dst = append(dst, `"}},"project":"default"`...)
	dst = g.appendTimestamp(dst, ts, digitsVector)
	return append(dst, '}')
}

// appendPostgresPlatform writes the message with csvlog fields.
func (g *Generator) appendPostgresPlatform(dst []byte, ts int64, pi int, m pgMsg, s *pgSession, msg []byte) []byte {
	p := g.projects.get(pi)
	pg := &g.pg
	r := &g.r
	cv := g.cal.at(ts)
	client := m.special < 0 || m.special == pgWalsender
	dst = append(dst, '{')
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = appendEscaped(dst, msg)
	dst = append(dst, `","metadata":{"host":"`...)
	dst = append(dst, p.dbHost...)
	dst = append(dst, `","parsed":{`...)
	if client && s.app != "" && !m.connect {
		dst = append(dst, `"application_name":`...)
		dst = appendSafe(dst, s.app)
		dst = append(dst, ',')
	}
	dst = append(dst, `"backend_type":"`...)
	switch {
	case m.connect:
		dst = append(dst, "not initialized"...)
	case m.special >= 0:
		dst = append(dst, pgSpecialBackends[m.special]...)
	default:
		dst = append(dst, "client backend"...)
	}
	dst = append(dst, '"')
	if m.tag != "" {
		dst = append(dst, `,"command_tag":"`...)
		dst = append(dst, m.tag...)
		dst = append(dst, '"')
	}
	if client && s.from != "" {
		dst = append(dst, `,"connection_from":"`...)
		dst = append(dst, s.from...)
		dst = append(dst, '"')
	}
	if m.state == "01000" {
		dst = append(dst, `,"context":"PL/pgSQL function pgbouncer.get_auth(text) line 3 at RAISE"`...)
	}
	if client && !m.connect {
		dst = append(dst, `,"database_name":"postgres"`...)
	}
	if len(pg.detail) > 0 {
		dst = append(dst, `,"detail":"`...)
		dst = appendEscaped(dst, pg.detail)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"error_severity":"`...)
	dst = append(dst, m.sev...)
	dst = append(dst, `","leader_pid":0,"process_id":`...)
	dst = appendInt(dst, s.pid)
	if len(pg.query) > 0 && m.sev != "LOG" {
		dst = append(dst, `,"query":"`...)
		dst = appendEscaped(dst, pg.query)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"query_id":`...)
	if len(pg.query) > 0 && r.intn(2) == 0 {
		dst = appendInt(dst, int(int64(r.next())))
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, `,"session_id":"`...)
	dst = strconv.AppendInt(dst, s.start/1e9, 16)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, int64(s.pid), 16)
	dst = append(dst, `","session_line_num":`...)
	dst = appendInt(dst, s.line)
	dst = append(dst, `,"session_start_time":"`...)
	dst = appendPGTime(dst, g.cal.at(s.start), 0)
	dst = append(dst, `","sql_state_code":"`...)
	dst = append(dst, m.state...)
	dst = append(dst, `","timestamp":"`...)
	dst = appendPGTime(dst, cv, 3)
	dst = append(dst, `","transaction_id":`...)
	if m.tag == "INSERT" || m.tag == "UPDATE" || m.tag == "DELETE" {
		pg.txid += 1 + r.intn(20)
		dst = appendInt(dst, pg.txid)
	} else {
		dst = append(dst, '0')
	}
	if client && s.user != "" && !m.connect {
		dst = append(dst, `,"user_name":`...)
		dst = appendSafe(dst, s.user)
	}
	dst = append(dst, `,"virtual_transaction_id":"`...)
	s.lxid++
	dst = appendInt(dst, s.backend)
	dst = append(dst, '/')
	dst = appendInt(dst, s.lxid)
	dst = append(dst, `"}},"project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, '"')
	dst = g.appendTimestamp(dst, ts, digitsPlatform)
	return append(dst, '}')
}
