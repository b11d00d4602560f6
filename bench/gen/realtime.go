package gen

// realtime.logs.prod: Realtime (Elixir) server logs. There is no top-level
// project: the project is metadata.project (and external_id, the tenant).

// realtimeMsg is one kind of Realtime log message. %P in text is replaced
// by the tenant (project ref), %T by a table name.
type realtimeMsg struct {
	level, text string
	module      string // Elixir module, for the platform context
	function    string
	code        string // error_code, if any
}

var realtimeMessages = newChoice(
	weighted[realtimeMsg]{22, realtimeMsg{"info", "Billing metrics: [:realtime, :rate_counter, :channel, :events] project=%P external_id=%P", "Realtime.Telemetry.Logger", "handle_event/4", ""}},
	weighted[realtimeMsg]{12, realtimeMsg{"info", "Billing metrics: [:realtime, :rate_counter, :channel, :joins] project=%P external_id=%P", "Realtime.Telemetry.Logger", "handle_event/4", ""}},
	weighted[realtimeMsg]{10, realtimeMsg{"info", "Billing metrics: [:realtime, :connections] project=%P external_id=%P", "Realtime.Telemetry.Logger", "handle_event/4", ""}},
	weighted[realtimeMsg]{12, realtimeMsg{"info", "Subscribed to PostgresChanges on topic: realtime:public:%T", "RealtimeWeb.RealtimeChannel", "handle_info/2", ""}},
	weighted[realtimeMsg]{8, realtimeMsg{"info", "Starting Realtime.Tenants.Connect for tenant %P", "Realtime.Tenants.Connect", "init/1", ""}},
	weighted[realtimeMsg]{8, realtimeMsg{"info", "Stop tenant %P because of no connected users", "Realtime.Tenants.Connect", "handle_info/2", ""}},
	weighted[realtimeMsg]{6, realtimeMsg{"info", "Replication slot supabase_realtime_messages_replication_slot_ created", "Realtime.Tenants.ReplicationConnection", "handle_result/2", ""}},
	weighted[realtimeMsg]{4, realtimeMsg{"debug", "Postgres CDC: polling changes for realtime:public:%T", "Extensions.PostgresCdcRls.ReplicationPoller", "handle_info/2", ""}},
	weighted[realtimeMsg]{6, realtimeMsg{"warning", "ChannelRateLimitReached: Too many channels", "RealtimeWeb.RealtimeChannel", "join/3", "ChannelRateLimitReached"}},
	weighted[realtimeMsg]{3, realtimeMsg{"warning", "RlsSubscriptionTimeout: Subscription to realtime:public:%T timed out", "Extensions.PostgresCdcRls.SubscriptionManager", "handle_info/2", "RlsSubscriptionTimeout"}},
	weighted[realtimeMsg]{4, realtimeMsg{"error", "UnableToConnectToProject: Unable to connect to Project database", "Realtime.Tenants.Connect", "handle_continue/2", "UnableToConnectToProject"}},
	weighted[realtimeMsg]{2, realtimeMsg{"error", "UnableToSetPolicies: Policies could not be set for topic realtime:public:%T", "RealtimeWeb.RealtimeChannel", "handle_info/2", "UnableToSetPolicies"}},
)

// Lines that do not match Vector's "<time> [<level>] <msg>" regex keep
// their raw text and get no level.
var realtimeRaw = []string{
	"Erlang/OTP 26 [erts-14.2.5] [source] [64-bit] [smp:2:2] [ds:2:2:10] [async-threads:1] [jit:ns]",
	"** (EXIT from #PID<0.95.0>) shutdown",
	"Running RealtimeWeb.Endpoint with Bandit 1.5.7 at :::4000 (http)",
}

type realtimeState struct {
	nodes []string // Erlang node names of the cluster
}

func (s *realtimeState) init(r *rng) {
	s.nodes = make([]string, 6)
	for i := range s.nodes {
		b := append([]byte("realtime@"), appendIPv4(nil, 10<<24|uint32(r.intn(1<<16))<<8|uint32(1+r.intn(250)))...)
		s.nodes[i] = string(b)
	}
}

// appendTemplate writes text with %P and %T replaced.
func appendTemplate(dst []byte, text, tenant, table string) []byte {
	for i := 0; i < len(text); i++ {
		if text[i] == '%' && i+1 < len(text) {
			switch text[i+1] {
			case 'P':
				dst = append(dst, tenant...)
				i++
				continue
			case 'T':
				dst = append(dst, table...)
				i++
				continue
			}
		}
		dst = append(dst, text[i])
	}
	return dst
}

func (g *Generator) appendRealtime(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	platform := g.opts.Shape == Platform
	tenant := p.ref
	if !platform {
		tenant = "realtime-dev" // the self-hosted tenant's name
	}
	if platform {
		dst = append(dst, '{')
	} else {
		dst = append(dst, `{"appname":"realtime-dev.supabase-realtime",`...)
	}
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	if !platform && r.intn(50) == 0 {
		dst = append(dst, realtimeRaw[r.intn(len(realtimeRaw))]...)
		dst = append(dst, `","metadata":{"external_id":"default","project":"default"}`...)
		dst = g.appendTimestamp(dst, ts, digitsVector)
		return append(dst, '}')
	}
	m := realtimeMessages.pick(r)
	dst = appendTemplate(dst, m.text, tenant, g.table())
	dst = append(dst, `","metadata":{`...)
	if platform {
		dst = append(dst, `"context":{"application":"realtime","domain":["elixir"],"file":"lib/`...)
		dst = appendSnake(dst, m.module)
		dst = append(dst, `.ex","function":"`...)
		dst = append(dst, m.function...)
		dst = append(dst, `","line":`...)
		dst = appendInt(dst, 20+int(len(m.text)*7%400))
		dst = append(dst, `,"module":"Elixir.`...)
		dst = append(dst, m.module...)
		dst = append(dst, `","pid":"<0.`...)
		dst = appendInt(dst, 1000+r.intn(900000))
		dst = append(dst, `.0>","vm":{"node":"`...)
		dst = append(dst, g.realtime.nodes[r.intn(len(g.realtime.nodes))]...)
		dst = append(dst, `"}},`...)
		if m.code != "" {
			dst = append(dst, `"error_code":"`...)
			dst = append(dst, m.code...)
			dst = append(dst, `",`...)
		}
	}
	dst = append(dst, `"external_id":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, `","level":"`...)
	dst = append(dst, m.level...)
	dst = append(dst, `","project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, `"}`...)
	dst = g.appendTimestamp(dst, ts, g.nativeDigits())
	return append(dst, '}')
}

// appendSnake writes an Elixir module name as its source path:
// "RealtimeWeb.RealtimeChannel" → "realtime_web/realtime_channel".
func appendSnake(dst []byte, module string) []byte {
	for i := 0; i < len(module); i++ {
		c := module[i]
		switch {
		case c == '.':
			dst = append(dst, '/')
		case 'A' <= c && c <= 'Z':
			if i > 0 && module[i-1] != '.' {
				dst = append(dst, '_')
			}
			dst = append(dst, c+'a'-'A')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
