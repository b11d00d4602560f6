package sql_test

import (
	"fmt"
	"strings"
	"testing"
)

// Fixture events, as Vector ships them in self-hosting
// (docs/compat/supabase.md §3.3) plus a few platform-shaped ones.
// Timestamps are within the two hours before fixedNow
// (2025-07-10T12:30:00Z).

func edgeEvents() string {
	type ev struct {
		id, ts, method, path string
		status               int
		project              string
		ip                   string
	}
	evs := []ev{
		{"e01", "2025-07-10T10:35:00Z", "GET", "/rest/v1/todos?select=*", 200, "default", "172.18.0.1"},
		{"e02", "2025-07-10T10:50:10Z", "POST", "/auth/v1/token?grant_type=password", 200, "default", "172.18.0.1"},
		{"e03", "2025-07-10T11:05:00Z", "GET", "/rest/v1/todos?id=eq.1", 404, "default", "10.0.0.7"},
		{"e04", "2025-07-10T11:20:30Z", "GET", "/storage/v1/object/public/avatars/a.png", 200, "default", "10.0.0.7"},
		{"e05", "2025-07-10T11:31:00Z", "GET", "/realtime/v1/websocket?apikey=x", 101, "default", "172.18.0.1"},
		{"e06", "2025-07-10T11:40:00Z", "POST", "/rest/v1/rpc/do_thing", 500, "default", "172.18.0.9"},
		{"e07", "2025-07-10T11:45:15Z", "GET", "/rest/v1/profiles?select=id", 200, "other", "10.1.1.1"},
		{"e08", "2025-07-10T11:59:59Z", "DELETE", "/rest/v1/todos?id=eq.3", 204, "default", "172.18.0.1"},
		{"e09", "2025-07-10T12:00:00Z", "GET", "/auth/v1/user", 401, "default", "2001:db8::1"},
		{"e10", "2025-07-10T12:05:30Z", "GET", "/functions/v1/hello", 200, "default", "172.18.0.1"},
		{"e11", "2025-07-10T12:10:00Z", "PATCH", "/rest/v1/todos?id=eq.2", 200, "default", "10.0.0.7"},
		{"e12", "2025-07-10T12:15:45Z", "GET", "/storage/v1/bucket", 500, "default", "172.18.0.9"},
		{"e13", "2025-07-10T12:20:00Z", "GET", "/rest/v1/todos?select=*", 200, "other", "10.1.1.1"},
		{"e14", "2025-07-10T12:25:00Z", "POST", "/auth/v1/signup", 422, "default", "172.18.0.1"},
		{"e15", "2025-07-10T12:29:00Z", "GET", "/rest/v1/todos?select=*", 502, "default", "172.18.0.1"},
	}
	var b strings.Builder
	for _, e := range evs {
		msg := fmt.Sprintf("%s - - [10/Jul/2025:%s +0000] \\\"%s %s HTTP/1.1\\\" %d 44 \\\"-\\\" \\\"supabase-js/2.50.0\\\"", e.ip, e.ts[11:19], e.method, e.path, e.status)
		fmt.Fprintf(&b, `{"id":"%s","appname":"supabase-kong","event_message":"%s","metadata":{"request":{"headers":{"cf_connecting_ip":"%s","referer":null,"user_agent":"supabase-js/2.50.0"},"method":"%s","path":"%s","protocol":"HTTP/1.1"},"response":{"status_code":%d}},"project":"%s","timestamp":"%s"}`+"\n",
			e.id, msg, e.ip, e.method, e.path, e.status, e.project, e.ts)
	}
	// A Kong error line with a severity and a host.
	b.WriteString(`{"id":"e16","appname":"supabase-kong","event_message":"2025/07/10 12:01:00 [error] 1288#0: *1470 connect() failed (111: Connection refused) while connecting to upstream","metadata":{"request":{"headers":{"cf_connecting_ip":"172.18.0.1"},"host":"localhost:8000","method":"GET","path":"/rest/v1/todos?select=*","protocol":"HTTP/1.1"},"response":{"status_code":200}},"project":"default","severity":"error","timestamp":"2025-07-10T12:01:00Z"}` + "\n")
	// Old events, outside the last hour.
	b.WriteString(`{"id":"e00","appname":"supabase-kong","event_message":"old request","metadata":{"request":{"method":"GET","path":"/rest/v1/old"},"response":{"status_code":200}},"project":"default","timestamp":"2025-07-09T08:00:00Z"}` + "\n")
	return b.String()
}

const authEvents = `
{"id":"a01","appname":"supabase-auth","event_message":"{\"component\":\"api\",\"level\":\"info\",\"method\":\"POST\",\"msg\":\"request completed\",\"path\":\"/signup\",\"status\":200}","metadata":{"component":"api","level":"info","method":"POST","msg":"request completed","path":"/signup","status":200,"time":"2025-07-10T12:00:05Z","timestamp":"2025-07-10T12:00:05Z"},"project":"default","timestamp":"2025-07-10T12:00:05.123456Z"}
{"id":"a02","appname":"supabase-auth","event_message":"{\"level\":\"error\",\"msg\":\"invalid login credentials\"}","metadata":{"level":"error","msg":"invalid login credentials","path":"/token","status":400,"timestamp":"2025-07-10T12:10:00Z"},"project":"default","timestamp":"2025-07-10T12:10:00Z"}
{"id":"a03","appname":"supabase-auth","event_message":"{\"level\":\"info\",\"msg\":\"audit_event\"}","metadata":{"level":"info","msg":"audit_event","auth_event":{"action":"user_signedup","actor_id":"u1","actor_username":"example_1@email.com","actor_via_sso":false,"log_type":"team","traits":{"provider":"email"}}},"project":"default","timestamp":"2025-07-10T12:20:00Z"}
{"id":"a04","appname":"supabase-auth","event_message":"not json at all","project":"default","timestamp":"2025-07-10T12:21:00Z"}
`

const postgresEvents = `
{"id":"p01","appname":"supabase-db","event_message":"2025-07-10 12:00:05.012 UTC [1234] LOG:  cron job 1 starting: SELECT auth.email()","metadata":{"host":"db-default","parsed":{"error_severity":"LOG","timestamp":"2025-07-10T12:00:05.013210487Z"}},"project":"default","timestamp":"2025-07-10T12:00:05.013210487Z"}
{"id":"p02","appname":"supabase-db","event_message":"2025-07-10 12:05:00.000 UTC [1240] ERROR:  duplicate key value violates unique constraint \"todos_pkey\"","metadata":{"host":"db-default","parsed":{"error_severity":"ERROR","timestamp":"2025-07-10T12:05:00Z"}},"project":"default","timestamp":"2025-07-10T12:05:00Z"}
{"id":"p03","appname":"supabase-db","event_message":"2025-07-10 12:06:00.000 UTC [1241] FATAL:  password authentication failed for user \"postgres\"","metadata":{"host":"db-default","parsed":{"error_severity":"FATAL","timestamp":"2025-07-10T12:06:00Z"}},"project":"default","timestamp":"2025-07-10T12:06:00Z"}
{"id":"p04","appname":"supabase-db","event_message":"2025-07-10 12:07:00.000 UTC [1242] WARNING:  there is no transaction in progress","metadata":{"host":"db-default","parsed":{"error_severity":"WARNING","timestamp":"2025-07-10T12:07:00Z"}},"project":"default","timestamp":"2025-07-10T12:07:00Z"}
`

const storageEvents = `
{"id":"s01","appname":"supabase-storage","event_message":"POST | 200 | 172.18.0.9 | 1b6c6a0e | /bucket | node","metadata":{"context":[{"host":"5c1e3a9d2b7f","pid":1}],"level":"info","project":"default","tenantId":"default","timestamp":"2025-07-10T12:00:09.210Z"},"timestamp":"2025-07-10T12:00:09.211862011Z"}
{"id":"s02","appname":"supabase-storage","event_message":"GET | 404 | 172.18.0.9 | 2c | /object | node","metadata":{"context":[{"host":"5c1e3a9d2b7f","pid":1},{"host":"other","pid":7}],"level":"warn","project":"default","tenantId":"default"},"timestamp":"2025-07-10T12:10:09Z"}
{"id":"s03","appname":"supabase-storage","event_message":"started","metadata":{"level":"info","project":"default","tenantId":"default","tags":["boot","init"]},"timestamp":"2025-07-10T12:11:00Z"}
`

const functionEvents = `
{"id":"f01","appname":"supabase-edge-functions","event_message":"serving the request with /home/deno/functions/hello","metadata":{"project_ref":"default"},"timestamp":"2025-07-10T12:00:10.004211876Z"}
{"id":"f02","appname":"supabase-edge-functions","event_message":"booted (time: 25ms)","metadata":{"project_ref":"default","level":"info"},"timestamp":"2025-07-10T12:00:11Z"}
{"id":"f03","appname":"supabase-edge-functions","event_message":"other project","metadata":{"project_ref":"other"},"timestamp":"2025-07-10T12:00:12Z"}
`

// supabaseDB loads the fixture sources, each partly flushed.
func supabaseDB(t testing.TB) *testDB {
	db := newTestDB(t)
	db.load(t, "cloudflare.logs.prod", edgeEvents(), 9)
	db.load(t, "gotrue.logs.prod", authEvents, 2)
	db.load(t, "postgres.logs", postgresEvents, 3)
	db.load(t, "storage.logs.prod.2", storageEvents, 1)
	db.load(t, "deno-relay-logs", functionEvents, 0)
	return db
}
