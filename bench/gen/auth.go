package gen

// gotrue.logs.prod: GoTrue's JSON log lines. event_message is the raw line
// (Studio parses it); metadata holds the same fields plus "timestamp" (a
// copy of "time"), as Vector's auth transform merges them.

type authRoute struct {
	method, path string
	redirect     bool // success is a redirect
}

var authRoutes = newChoice(
	weighted[authRoute]{35, authRoute{"POST", "/token", false}},
	weighted[authRoute]{22, authRoute{"GET", "/user", false}},
	weighted[authRoute]{10, authRoute{"GET", "/health", false}},
	weighted[authRoute]{5, authRoute{"POST", "/logout", false}},
	weighted[authRoute]{5, authRoute{"POST", "/signup", false}},
	weighted[authRoute]{4, authRoute{"GET", "/settings", false}},
	weighted[authRoute]{4, authRoute{"GET", "/verify", true}},
	weighted[authRoute]{3, authRoute{"PUT", "/user", false}},
	weighted[authRoute]{3, authRoute{"POST", "/recover", false}},
	weighted[authRoute]{3, authRoute{"POST", "/otp", false}},
	weighted[authRoute]{3, authRoute{"GET", "/authorize", true}},
	weighted[authRoute]{3, authRoute{"GET", "/callback", true}},
)

// authAction is a GoTrue audit action with its log type and route.
type authAction struct {
	action, logType, method, path string
}

var authActions = newChoice(
	weighted[authAction]{30, authAction{"token_refreshed", "token", "POST", "/token"}},
	weighted[authAction]{28, authAction{"login", "account", "POST", "/token"}},
	weighted[authAction]{10, authAction{"token_revoked", "token", "POST", "/token"}},
	weighted[authAction]{8, authAction{"logout", "account", "POST", "/logout"}},
	weighted[authAction]{6, authAction{"user_signedup", "team", "POST", "/signup"}},
	weighted[authAction]{4, authAction{"user_confirmation_requested", "user", "POST", "/signup"}},
	weighted[authAction]{4, authAction{"user_modified", "user", "PUT", "/user"}},
	weighted[authAction]{3, authAction{"user_recovery_requested", "user", "POST", "/recover"}},
	weighted[authAction]{2, authAction{"user_updated_password", "user", "PUT", "/user"}},
	weighted[authAction]{2, authAction{"user_repeated_signup", "user", "POST", "/signup"}},
	weighted[authAction]{1, authAction{"user_invited", "team", "POST", "/invite"}},
	weighted[authAction]{1, authAction{"user_deleted", "team", "DELETE", "/admin/users"}},
)

var authProviders = newChoice(
	weighted[string]{60, "email"}, weighted[string]{20, "google"}, weighted[string]{9, "github"},
	weighted[string]{5, "apple"}, weighted[string]{3, "phone"}, weighted[string]{2, "azure"}, weighted[string]{1, "discord"},
)

// authErrors are GoTrue's API errors: status, error code and message.
type authError struct {
	status       int
	code, text   string
	method, path string
}

var authErrors = newChoice(
	weighted[authError]{35, authError{400, "invalid_credentials", "Invalid login credentials", "POST", "/token"}},
	weighted[authError]{15, authError{400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found", "POST", "/token"}},
	weighted[authError]{15, authError{403, "bad_jwt", "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired", "GET", "/user"}},
	weighted[authError]{10, authError{422, "user_already_exists", "User already registered", "POST", "/signup"}},
	weighted[authError]{10, authError{429, "over_email_send_rate_limit", "email rate limit exceeded", "POST", "/otp"}},
	weighted[authError]{8, authError{400, "email_not_confirmed", "Email not confirmed", "POST", "/token"}},
	weighted[authError]{5, authError{422, "weak_password", "Password should be at least 6 characters.", "PUT", "/user"}},
	weighted[authError]{2, authError{500, "unexpected_failure", "Database error saving new user", "POST", "/signup"}},
)

// authSystem are GoTrue's non-request lines, written as complete JSON
// objects without "time" (added by the writer) and the closing brace.
var authSystem = newChoice(
	weighted[string]{30, `{"args":[0.0123],"component":"pop","level":"info","msg":"%.4f seconds"`},
	weighted[string]{20, `{"level":"info","msg":"GoTrue migrations applied successfully"`},
	weighted[string]{15, `{"level":"info","msg":"GoTrue API started on: 0.0.0.0:9999"`},
	weighted[string]{15, `{"level":"info","msg":"Migrations already up to date, nothing to apply"`},
	weighted[string]{10, `{"component":"api","level":"error","msg":"Unhandled server error: context canceled"`},
	weighted[string]{10, `{"level":"warning","msg":"DEPRECATION NOTICE: GOTRUE_JWT_ADMIN_GROUP_NAME not supported by Supabase's GoTrue, will be removed soon"`},
)

var authDurations = newSpans(weighted[span]{30, span{100000, 2000000}}, weighted[span]{50, span{2000000, 80000000}}, weighted[span]{18, span{80000000, 500000000}}, weighted[span]{2, span{500000000, 5000000000}})

func (g *Generator) appendAuth(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	c := g.clients.pick(r, pi)
	cv := g.cal.at(ts)
	platform := g.opts.Shape == Platform
	remote := c.ip
	if !platform && r.intn(10) < 7 {
		remote = "172.18.0.1"
	}

	// Build the GoTrue line (keys in byte order, as logrus writes them).
	line := g.scratch[:0]
	// writeMethod writes the method and the key of msg, whose value the
	// caller writes; writeRequest writes the members after msg.
	writeMethod := func(method string) {
		line = append(line, `"method":"`...)
		line = append(line, method...)
		line = append(line, `","msg":`...)
	}
	writeRequest := func(path string, status int) {
		line = append(line, `,"path":"`...)
		line = append(line, path...)
		line = append(line, `","referer":"`...)
		if c.ua.browser {
			line = append(line, p.appOrigin...)
		}
		line = append(line, `","remote_addr":"`...)
		line = append(line, remote...)
		line = append(line, `","request_id":"`...)
		line = appendUUID(line, r)
		line = append(line, '"')
		if status > 0 {
			line = append(line, `,"status":`...)
			line = appendInt(line, status)
		}
	}
	switch x := r.intn(100); {
	case x < 65:
		rt := authRoutes.pick(r)
		status := 200
		switch {
		case rt.redirect:
			status = 302
		case r.intn(100) < 3:
			status = 429
		case r.intn(1000) < 5:
			status = 500
		}
		line = append(line, `{"component":"api","duration":`...)
		line = appendInt(line, authDurations.draw(r))
		line = append(line, `,"level":"`...)
		if status >= 500 {
			line = append(line, "error"...)
		} else {
			line = append(line, "info"...)
		}
		line = append(line, `",`...)
		writeMethod(rt.method)
		line = append(line, `"request completed"`...)
		writeRequest(rt.path, status)
	case x < 80:
		a := authActions.pick(r)
		k := userRanks.pick(r)
		provider := authProviders.pick(r)
		line = append(line, `{"auth_event":{"action":"`...)
		line = append(line, a.action...)
		line = append(line, `","actor_id":"`...)
		line = appendUserID(line, p, k)
		line = append(line, `","actor_username":"`...)
		if provider == "phone" {
			line = append(line, "+1555"...)
			line = appendInt(line, 1000000+k)
		} else {
			line = appendUserEmail(line, p, k)
		}
		line = append(line, `","actor_via_sso":`...)
		if r.intn(100) == 0 {
			line = append(line, "true"...)
		} else {
			line = append(line, "false"...)
		}
		line = append(line, `,"log_type":"`...)
		line = append(line, a.logType...)
		line = append(line, `","traits":{"provider":"`...)
		line = append(line, provider...)
		line = append(line, `"}},"component":"api","level":"info",`...)
		writeMethod(a.method)
		line = append(line, `"audit_event"`...)
		writeRequest(a.path, 0)
	case x < 90:
		e := authErrors.pick(r)
		line = append(line, `{"component":"api","error":"`...)
		line = append(line, e.code...)
		line = append(line, ": "...)
		line = append(line, e.text...)
		line = append(line, `","error_code":"`...)
		line = append(line, e.code...)
		line = append(line, `","level":"info",`...)
		writeMethod(e.method)
		line = append(line, '"')
		line = appendInt(line, e.status)
		line = append(line, ": "...)
		line = append(line, e.text...)
		line = append(line, '"')
		writeRequest(e.path, 0)
	default:
		line = append(line, authSystem.pick(r)...)
	}
	line = append(line, `,"time":"`...)
	line = appendRFC3339(line, cv, 0)
	line = append(line, `"}`...)
	g.scratch = line

	if !platform {
		dst = append(dst, `{"appname":"supabase-auth",`...)
	} else {
		dst = append(dst, '{')
	}
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	dst = appendEscaped(dst, line)
	dst = append(dst, `","metadata":{`...)
	if platform {
		dst = append(dst, `"host":"`...)
		dst = append(dst, p.dbHost...)
		dst = append(dst, `",`...)
	}
	dst = append(dst, line[1:len(line)-1]...)
	dst = append(dst, `,"timestamp":"`...)
	dst = appendRFC3339(dst, cv, 0)
	dst = append(dst, `"},"project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, '"')
	dst = g.appendTimestamp(dst, ts, g.nativeDigits())
	return append(dst, '}')
}
