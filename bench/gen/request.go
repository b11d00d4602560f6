package gen

// The model of one API request through Supabase's gateway, shared by the
// edge (Kong / Cloudflare) events and the Storage and GoTrue request lines
// that echo them: which API, method, path and query string, status, and the
// response's type and size.

// apiKind is the API a request addresses.
type apiKind uint8

const (
	kindRestSelect    apiKind = iota // GET /rest/v1/<table>?select=…
	kindRestWrite                    // POST/PATCH/DELETE /rest/v1/<table>
	kindRPC                          // /rest/v1/rpc/<fn>
	kindAuthToken                    // /auth/v1/token?grant_type=…
	kindAuthUser                     // /auth/v1/user
	kindAuthOther                    // signup, logout, otp, verify, authorize, …
	kindStorageObject                // /storage/v1/object/…
	kindStorageRender                // /storage/v1/render/image/public/…
	kindRealtime                     // /realtime/v1/websocket
	kindFunctions                    // /functions/v1/<name>
	kindGraphQL                      // /graphql/v1
	kindMeta                         // /pg/… (Studio → postgres-meta; self-hosted only)
)

// platformKinds: the share of each API in platform edge traffic, per mille.
var platformKinds = newChoice(
	weighted[apiKind]{530, kindRestSelect},
	weighted[apiKind]{110, kindRestWrite},
	weighted[apiKind]{80, kindStorageObject},
	weighted[apiKind]{70, kindAuthToken},
	weighted[apiKind]{50, kindRPC},
	weighted[apiKind]{50, kindAuthUser},
	weighted[apiKind]{40, kindFunctions},
	weighted[apiKind]{20, kindRealtime},
	weighted[apiKind]{20, kindAuthOther},
	weighted[apiKind]{20, kindStorageRender},
	weighted[apiKind]{10, kindGraphQL},
)

// selfHostedKinds adds Studio's calls to postgres-meta through Kong.
var selfHostedKinds = newChoice(
	weighted[apiKind]{480, kindRestSelect},
	weighted[apiKind]{110, kindRestWrite},
	weighted[apiKind]{80, kindStorageObject},
	weighted[apiKind]{70, kindAuthToken},
	weighted[apiKind]{50, kindRPC},
	weighted[apiKind]{50, kindAuthUser},
	weighted[apiKind]{40, kindMeta},
	weighted[apiKind]{40, kindFunctions},
	weighted[apiKind]{30, kindRealtime},
	weighted[apiKind]{20, kindAuthOther},
	weighted[apiKind]{20, kindStorageRender},
	weighted[apiKind]{10, kindGraphQL},
)

var (
	methodsRestSelect = newChoice(weighted[string]{92, "GET"}, weighted[string]{4, "HEAD"}, weighted[string]{4, "OPTIONS"})
	methodsRestWrite  = newChoice(weighted[string]{50, "POST"}, weighted[string]{28, "PATCH"}, weighted[string]{12, "DELETE"}, weighted[string]{10, "OPTIONS"})
	methodsRPC        = newChoice(weighted[string]{85, "POST"}, weighted[string]{10, "GET"}, weighted[string]{5, "OPTIONS"})
	methodsAuthToken  = newChoice(weighted[string]{95, "POST"}, weighted[string]{5, "OPTIONS"})
	methodsAuthUser   = newChoice(weighted[string]{85, "GET"}, weighted[string]{10, "PUT"}, weighted[string]{5, "OPTIONS"})
	methodsFunctions  = newChoice(weighted[string]{75, "POST"}, weighted[string]{10, "GET"}, weighted[string]{15, "OPTIONS"})
	methodsGraphQL    = newChoice(weighted[string]{90, "POST"}, weighted[string]{10, "OPTIONS"})
)

// Status classes over all requests, per mille: ~85% success, ~1.5% 3xx
// (only GETs can be redirected or revalidated; a 3xx drawn for another
// method becomes a success), ~10.5% 4xx, ~1.5% 5xx.
var statusClasses = newChoice(
	weighted[int]{855, 2},
	weighted[int]{25, 3},
	weighted[int]{105, 4},
	weighted[int]{15, 5},
)

var (
	status3xx = newChoice(weighted[int]{80, 304}, weighted[int]{10, 302}, weighted[int]{5, 301}, weighted[int]{5, 307})
	status4xx = newChoice(weighted[int]{25, 401}, weighted[int]{25, 404}, weighted[int]{20, 400}, weighted[int]{10, 403},
		weighted[int]{8, 409}, weighted[int]{7, 429}, weighted[int]{5, 406})
	status5xx = newChoice(weighted[int]{35, 500}, weighted[int]{20, 502}, weighted[int]{20, 504}, weighted[int]{15, 503}, weighted[int]{10, 520})
)

var (
	// rowIDs: primary keys in filters, mostly small.
	rowIDs = newSpans(weighted[span]{40, span{1, 100}}, weighted[span]{30, span{100, 1000}}, weighted[span]{30, span{1000, 100000}})
	// originTimes: Cloudflare's origin_time in ms — mostly 5–200 ms,
	// a tail to seconds.
	originTimes = newSpans(
		weighted[span]{60, span{1, 5}}, weighted[span]{260, span{5, 20}}, weighted[span]{300, span{20, 50}},
		weighted[span]{180, span{50, 100}}, weighted[span]{110, span{100, 200}}, weighted[span]{55, span{200, 500}},
		weighted[span]{20, span{500, 1000}}, weighted[span]{11, span{1000, 3000}}, weighted[span]{4, span{3000, 15000}},
	)
	jsonBodySizes  = newSpans(weighted[span]{30, span{2, 200}}, weighted[span]{45, span{200, 4000}}, weighted[span]{20, span{4000, 50000}}, weighted[span]{5, span{50000, 900000}})
	fileSizes      = newSpans(weighted[span]{30, span{500, 20000}}, weighted[span]{45, span{20000, 300000}}, weighted[span]{20, span{300000, 3000000}}, weighted[span]{5, span{3000000, 50000000}})
	kongLatencies  = newSpans(weighted[span]{70, span{0, 2}}, weighted[span]{25, span{2, 10}}, weighted[span]{5, span{10, 80}})
	cacheStatuses  = newChoice(weighted[string]{55, "HIT"}, weighted[string]{30, "MISS"}, weighted[string]{6, "REVALIDATED"}, weighted[string]{5, "EXPIRED"}, weighted[string]{4, "STALE"})
	imageWidths    = []string{"64", "128", "256", "400", "640", "800", "1080", "1920"}
	grantTypes     = newChoice(weighted[string]{70, "refresh_token"}, weighted[string]{25, "password"}, weighted[string]{5, "pkce"})
	authOtherPaths = newChoice(
		weighted[[2]string]{20, [2]string{"POST", "/auth/v1/logout"}},
		weighted[[2]string]{15, [2]string{"POST", "/auth/v1/signup"}},
		weighted[[2]string]{15, [2]string{"GET", "/auth/v1/settings"}},
		weighted[[2]string]{12, [2]string{"POST", "/auth/v1/otp"}},
		weighted[[2]string]{10, [2]string{"GET", "/auth/v1/verify"}},
		weighted[[2]string]{10, [2]string{"GET", "/auth/v1/authorize"}},
		weighted[[2]string]{8, [2]string{"GET", "/auth/v1/callback"}},
		weighted[[2]string]{5, [2]string{"POST", "/auth/v1/recover"}},
		weighted[[2]string]{5, [2]string{"GET", "/auth/v1/health"}},
	)
	oauthProviders = []string{"google", "github", "apple", "azure", "discord"}
)

// request is one drawn API request. path and query are views into the
// generator's scratch buffers, valid until the next draw.
type request struct {
	kind        apiKind
	method      string
	path        []byte // without the query string
	query       []byte // without the leading '?'; empty for none
	status      int
	contentType string // "" when the response has no body
	length      int    // response body size in bytes
	fileType    string // storage objects: the file's media type
}

// requestDrawer owns the scratch space requests are built in.
type requestDrawer struct {
	path, query []byte
	req         request
	// objects > 0 draws storage objects from a set of that many
	// (Options.StorageObjects), derived from objectSeed.
	objects    int
	objectSeed uint64
}

// storageObject is one object of the fixed set Options.StorageObjects
// selects: everything about it follows from its number.
type storageObject struct {
	bucket string
	ext    [2]string // extension and media type
	h      uint64    // the bits its name is made of
}

// object draws one object of the fixed set, uniformly.
func (d *requestDrawer) object(r *rng) storageObject {
	h := finalize(d.objectSeed + uint64(r.intn(d.objects))*0x9e3779b97f4a7c15)
	return storageObject{
		bucket: bucketNames[h%uint64(len(bucketNames))],
		ext:    fileExts.at(h >> 8),
		h:      finalize(h),
	}
}

// appendName writes the object's name as appendFileName would draw it:
// "3f2a9c1e/avatar.png" or "cover-1234.webp", with extension ext.
func (o storageObject) appendName(dst []byte, ext string) []byte {
	stem := fileStems[(o.h>>1)%uint64(len(fileStems))]
	if o.h&1 == 0 {
		dst = appendHex(dst, o.h>>8, 8)
		dst = append(dst, '/')
		dst = append(dst, stem...)
	} else {
		dst = append(dst, stem...)
		dst = append(dst, '-')
		dst = appendInt(dst, 1+int((o.h>>16)%100000))
	}
	return append(dst, ext...)
}

// draw builds a request to project p, drawing the API from kinds.
func (d *requestDrawer) draw(r *rng, kinds *choice[apiKind], p *project) *request {
	q := &d.req
	*q = request{kind: kinds.pick(r)}
	path, query := d.path[:0], d.query[:0]
	switch q.kind {
	case kindRestSelect:
		q.method = methodsRestSelect.pick(r)
		path = append(path, "/rest/v1/"...)
		path = append(path, tableNames[r.intn(len(tableNames))]...)
		query = appendSelectQuery(query, r)
	case kindRestWrite:
		q.method = methodsRestWrite.pick(r)
		path = append(path, "/rest/v1/"...)
		path = append(path, tableNames[r.intn(len(tableNames))]...)
		switch q.method {
		case "POST":
			switch r.intn(4) {
			case 0:
				query = append(query, "select=*"...)
			case 1:
				query = append(query, "on_conflict=id"...)
			case 2:
				query = append(query, "columns=%22"...)
				query = append(query, columnNames[1+r.intn(len(columnNames)-1)]...)
				query = append(query, "%22%2C%22user_id%22"...)
			}
		default:
			query = append(query, "id=eq."...)
			query = appendInt(query, rowIDs.draw(r))
		}
	case kindRPC:
		q.method = methodsRPC.pick(r)
		path = append(path, "/rest/v1/rpc/"...)
		path = append(path, rpcNames[r.intn(len(rpcNames))]...)
		if q.method == "GET" {
			query = append(query, "query="...)
			query = append(query, appWords[r.intn(len(appWords))]...)
		}
	case kindAuthToken:
		q.method = methodsAuthToken.pick(r)
		path = append(path, "/auth/v1/token"...)
		query = append(query, "grant_type="...)
		query = append(query, grantTypes.pick(r)...)
	case kindAuthUser:
		q.method = methodsAuthUser.pick(r)
		path = append(path, "/auth/v1/user"...)
	case kindAuthOther:
		mp := authOtherPaths.pick(r)
		q.method = mp[0]
		path = append(path, mp[1]...)
		switch mp[1] {
		case "/auth/v1/verify":
			query = append(query, "token="...)
			query = appendHex(query, r.next(), 16)
			query = appendHex(query, r.next(), 12)
			query = append(query, "&type=signup&redirect_to="...)
			query = appendURLComponent(query, p.appOrigin)
		case "/auth/v1/authorize":
			query = append(query, "provider="...)
			query = append(query, oauthProviders[r.intn(len(oauthProviders))]...)
			query = append(query, "&redirect_to="...)
			query = appendURLComponent(query, p.appOrigin)
			query = append(query, "%2Fauth%2Fcallback"...)
		case "/auth/v1/callback":
			query = append(query, "code="...)
			query = appendHex(query, r.next(), 16)
			query = append(query, "&state="...)
			query = appendHex(query, r.next(), 16)
		case "/auth/v1/logout":
			if r.intn(2) == 0 {
				query = append(query, "scope=global"...)
			}
		}
	case kindStorageObject:
		bucket := bucketNames[r.intn(len(bucketNames))]
		ext := fileExts.pick(r)
		var obj storageObject
		if d.objects > 0 {
			obj = d.object(r)
			bucket, ext = obj.bucket, obj.ext
		}
		q.fileType = ext[1]
		switch x := r.intn(100); {
		case x < 70:
			q.method = "GET"
			path = append(path, "/storage/v1/object/public/"...)
		case x < 78:
			q.method = "GET"
			path = append(path, "/storage/v1/object/sign/"...)
			query = append(query, "token=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."...)
			query = appendHex(query, r.next(), 16)
		case x < 80:
			q.method = "HEAD"
			path = append(path, "/storage/v1/object/"...)
		case x < 90:
			q.method = "POST"
			path = append(path, "/storage/v1/object/"...)
		case x < 95:
			q.method = "POST"
			path = append(path, "/storage/v1/object/list/"...)
			path = append(path, bucket...)
			q.fileType = ""
		case x < 97:
			q.method = "DELETE"
			path = append(path, "/storage/v1/object/"...)
			path = append(path, bucket...)
			q.fileType = ""
		default:
			q.method = "OPTIONS"
			path = append(path, "/storage/v1/object/"...)
		}
		if q.fileType != "" {
			path = append(path, bucket...)
			path = append(path, '/')
			if d.objects > 0 {
				path = obj.appendName(path, ext[0])
			} else {
				path = appendFileName(path, r, ext[0])
			}
		}
	case kindStorageRender:
		q.method = "GET"
		q.fileType = "image/webp"
		path = append(path, "/storage/v1/render/image/public/"...)
		if d.objects > 0 {
			obj := d.object(r)
			path = append(path, obj.bucket...)
			path = append(path, '/')
			path = obj.appendName(path, ".jpg")
		} else {
			path = append(path, bucketNames[r.intn(len(bucketNames))]...)
			path = append(path, '/')
			path = appendFileName(path, r, ".jpg")
		}
		query = append(query, "width="...)
		query = append(query, imageWidths[r.intn(len(imageWidths))]...)
		query = append(query, "&height=0&quality=80&resize=cover"...)
	case kindRealtime:
		q.method = "GET"
		path = append(path, "/realtime/v1/websocket"...)
		query = append(query, "apikey="...)
		query = append(query, p.publicKey...)
		if r.intn(3) == 0 {
			query = append(query, "&vsn=2.0.0"...)
		} else {
			query = append(query, "&vsn=1.0.0"...)
		}
	case kindFunctions:
		q.method = methodsFunctions.pick(r)
		path = append(path, "/functions/v1/"...)
		path = append(path, p.functions[r.intn(len(p.functions))].name...)
	case kindGraphQL:
		q.method = methodsGraphQL.pick(r)
		path = append(path, "/graphql/v1"...)
	case kindMeta:
		if r.intn(3) == 0 {
			q.method = "POST"
			path = append(path, "/pg/query"...)
		} else {
			q.method = "GET"
			path = append(path, "/pg/tables"...)
			query = append(query, "include_columns=true&excluded_schemas=pg_catalog%2Cinformation_schema"...)
		}
	}
	d.path, d.query = path, query
	q.path, q.query = path, query
	q.status = drawStatus(r, q)
	q.contentType, q.length = responseBody(r, q)
	return q
}

// appendSelectQuery writes a PostgREST query string as supabase-js builds it
// (URLSearchParams encoding: ',' → %2C, '(' → %28, '*' kept).
func appendSelectQuery(q []byte, r *rng) []byte {
	switch x := r.intn(100); {
	case x < 30:
		q = append(q, "select=*"...)
	case x < 60:
		q = append(q, "select=*&id=eq."...)
		q = appendInt(q, rowIDs.draw(r))
	case x < 64:
		q = append(q, "select=id%2C"...)
		q = append(q, columnNames[1+r.intn(len(columnNames)-1)]...)
		q = append(q, "%2Ccreated_at&user_id=eq."...)
		q = appendUUID(q, r)
		q = append(q, "&order=created_at.desc"...)
	case x < 79:
		q = append(q, "select=*&order=created_at.desc&limit="...)
		q = appendInt(q, 1+r.intn(100))
	case x < 84:
		q = append(q, "select=*%2Cprofiles%28*%29&id=eq."...)
		q = appendInt(q, rowIDs.draw(r))
	case x < 89:
		q = append(q, "id=eq."...)
		q = appendInt(q, rowIDs.draw(r))
		q = append(q, "&select=*"...)
	case x < 93:
		q = append(q, "select=id&status=in.%28active%2Cpending%29&limit="...)
		q = appendInt(q, 10*(1+r.intn(10)))
	case x < 97:
		q = append(q, "select=*&created_at=gte.2025-07-0"...)
		q = appendInt(q, 1+r.intn(9))
		q = append(q, "T00%3A00%3A00.000Z&offset="...)
		q = appendInt(q, 50*r.intn(20))
		q = append(q, "&limit=50"...)
	}
	return q
}

// appendFileName writes a storage object name such as "3f2a9c1e/avatar.png"
// or "cover-1234.webp".
func appendFileName(dst []byte, r *rng, ext string) []byte {
	if r.intn(2) == 0 {
		dst = appendHex(dst, r.next(), 8)
		dst = append(dst, '/')
		dst = append(dst, fileStems[r.intn(len(fileStems))]...)
	} else {
		dst = append(dst, fileStems[r.intn(len(fileStems))]...)
		dst = append(dst, '-')
		dst = appendInt(dst, rowIDs.draw(r))
	}
	return append(dst, ext...)
}

// appendURLComponent percent-encodes s like encodeURIComponent.
func appendURLComponent(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '!', c == '~', c == '*', c == '\'', c == '(', c == ')':
			dst = append(dst, c)
		default:
			dst = append(dst, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&0xf])
		}
	}
	return dst
}

// drawStatus draws the response status for q.
func drawStatus(r *rng, q *request) int {
	class := statusClasses.pick(r)
	if q.method == "OPTIONS" && class != 5 {
		return 200 // CORS preflights succeed
	}
	if class == 3 && q.method != "GET" {
		class = 2
	}
	switch class {
	case 3:
		return status3xx.pick(r)
	case 4:
		return status4xx.pick(r)
	case 5:
		return status5xx.pick(r)
	}
	switch {
	case q.kind == kindRealtime:
		return 101
	case q.kind == kindRestWrite && q.method == "POST":
		return 201
	case q.method == "DELETE" && q.kind == kindRestWrite:
		return 204
	case q.method == "PATCH" && r.intn(2) == 0:
		return 204
	case q.method == "GET" && q.fileType != "" && r.intn(20) == 0:
		return 206
	}
	return 200
}

// responseBody returns the response's content type and size.
func responseBody(r *rng, q *request) (string, int) {
	switch {
	case q.status == 101 || q.status == 204 || q.status == 304 || q.method == "OPTIONS":
		return "", 0
	case q.status >= 300 && q.status < 400:
		return "text/html", 0
	case q.status >= 400:
		return "application/json", 20 + r.intn(200)
	case q.method == "HEAD":
		return "", 0
	}
	switch q.kind {
	case kindStorageObject, kindStorageRender:
		if q.fileType != "" && q.method == "GET" {
			return q.fileType, fileSizes.draw(r)
		}
		return "application/json", 20 + r.intn(2000)
	case kindAuthToken:
		return "application/json;charset=UTF-8", 900 + r.intn(700)
	case kindAuthUser, kindAuthOther:
		return "application/json;charset=UTF-8", 80 + r.intn(1500)
	case kindFunctions:
		if r.intn(3) == 0 {
			return "text/plain;charset=UTF-8", 2 + r.intn(200)
		}
		return "application/json", jsonBodySizes.draw(r)
	}
	return "application/json; charset=utf-8", jsonBodySizes.draw(r)
}
