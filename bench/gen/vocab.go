package gen

// Vocabularies shared by several sources. Every string here is appended to
// JSON without escaping, so none may contain a double quote, a backslash or a
// control character (TestVocabularyNeedsNoEscaping enforces it). Non-ASCII
// UTF-8 is fine and deliberate (São Paulo, Île-de-France).

// userAgent is a client software: its User-Agent, the x-client-info header
// Supabase's client libraries send ("" for none), whether it is a browser,
// and the HTTP version it usually speaks to Cloudflare.
type userAgent struct {
	ua         string
	clientInfo string
	browser    bool
	server     bool // runs in a data centre (its ASN is a cloud provider)
	http       string
}

// userAgents: a quarter browsers (supabase-js in a web app), 45% server
// and edge runtimes, 22% mobile SDKs, the rest tools.
var userAgents = newChoice(
	weighted[userAgent]{40, userAgent{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "supabase-js-web/2.45.4", true, false, "HTTP/2"}},
	weighted[userAgent]{35, userAgent{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36", "supabase-js-web/2.43.4", true, false, "HTTP/3"}},
	weighted[userAgent]{35, userAgent{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "supabase-js-web/2.45.4", true, false, "HTTP/3"}},
	weighted[userAgent]{30, userAgent{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", "supabase-js-web/2.44.2", true, false, "HTTP/3"}},
	weighted[userAgent]{20, userAgent{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "supabase-js-web/2.39.8", true, false, "HTTP/2"}},
	weighted[userAgent]{15, userAgent{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0", "supabase-js-web/2.45.4", true, false, "HTTP/2"}},
	weighted[userAgent]{12, userAgent{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0", "supabase-js-web/2.44.2", true, false, "HTTP/2"}},
	weighted[userAgent]{8, userAgent{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36", "", true, false, "HTTP/2"}},
	weighted[userAgent]{150, userAgent{"node", "supabase-js-node/2.45.4", false, true, "HTTP/1.1"}},
	weighted[userAgent]{45, userAgent{"node", "supabase-js/2.50.0; runtime=node", false, true, "HTTP/1.1"}},
	weighted[userAgent]{55, userAgent{"Deno/1.45.2 (variant; SupabaseEdgeRuntime/1.58.3)", "supabase-js-deno/2.45.4", false, true, "HTTP/2"}},
	weighted[userAgent]{30, userAgent{"node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", "supabase-js-node/2.39.3", false, true, "HTTP/1.1"}},
	weighted[userAgent]{25, userAgent{"python-httpx/0.27.0", "supabase-py/2.5.3", false, true, "HTTP/1.1"}},
	weighted[userAgent]{15, userAgent{"python-httpx/0.25.2", "postgrest-py/v0.13.2", false, true, "HTTP/1.1"}},
	weighted[userAgent]{15, userAgent{"axios/1.7.2", "postgrest-js/1.15.8", false, true, "HTTP/1.1"}},
	weighted[userAgent]{10, userAgent{"Go-http-client/2.0", "", false, true, "HTTP/2"}},
	weighted[userAgent]{80, userAgent{"Dart/3.4 (dart:io)", "supabase-flutter/2.5.6", false, false, "HTTP/1.1"}},
	weighted[userAgent]{40, userAgent{"Tasks/118 CFNetwork/1496.0.7 Darwin/23.5.0", "supabase-swift/2.13.0", false, false, "HTTP/2"}},
	weighted[userAgent]{25, userAgent{"okhttp/4.12.0", "supabase-kt/2.5.1", false, false, "HTTP/2"}},
	weighted[userAgent]{25, userAgent{"Expo/1017565 CFNetwork/1496.0.7 Darwin/23.5.0", "supabase-js-react-native/2.44.0", false, false, "HTTP/2"}},
	weighted[userAgent]{40, userAgent{"curl/8.7.1", "", false, true, "HTTP/2"}},
	weighted[userAgent]{10, userAgent{"PostmanRuntime/7.39.0", "", false, false, "HTTP/1.1"}},
	weighted[userAgent]{5, userAgent{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "", false, true, "HTTP/1.1"}},
)

// location is a Cloudflare colo with the geography of the clients it
// serves. Latitude and longitude are in units of 1e-5 degrees (Cloudflare's
// request.cf reports them as strings with five decimals).
type location struct {
	country, colo, city, region, timezone string
	lat, lon                              int
	asns                                  []int  // local ISPs' autonomous systems
	v6                                    string // IPv6 prefix of local ISPs
}

var locations = newChoice(
	weighted[location]{90, location{"US", "IAD", "Ashburn", "Virginia", "America/New_York", 3904370, -7748750, []int{7922, 701}, "2600:1700"}},
	weighted[location]{70, location{"US", "SJC", "San Jose", "California", "America/Los_Angeles", 3733820, -12188630, []int{7922, 7018}, "2601:646"}},
	weighted[location]{50, location{"US", "ORD", "Chicago", "Illinois", "America/Chicago", 4188190, -8762980, []int{7018, 20115}, "2601:240"}},
	weighted[location]{45, location{"US", "DFW", "Dallas", "Texas", "America/Chicago", 3277670, -9679700, []int{7018, 11427}, "2600:1702"}},
	weighted[location]{40, location{"US", "EWR", "New York", "New York", "America/New_York", 4071280, -7400600, []int{701, 12271}, "2600:4040"}},
	weighted[location]{30, location{"US", "SEA", "Seattle", "Washington", "America/Los_Angeles", 4760620, -12233210, []int{7922, 21928}, "2607:fb90"}},
	weighted[location]{25, location{"CA", "YYZ", "Toronto", "Ontario", "America/Toronto", 4365320, -7938320, []int{577, 812}, "2607:fea8"}},
	weighted[location]{35, location{"BR", "GRU", "São Paulo", "São Paulo", "America/Sao_Paulo", -2355050, -4663330, []int{28573, 18881}, "2804:14c"}},
	weighted[location]{15, location{"MX", "MEX", "Mexico City", "Mexico City", "America/Mexico_City", 1943260, -9913320, []int{8151}, "2806:2f0"}},
	weighted[location]{45, location{"GB", "LHR", "London", "England", "Europe/London", 5150740, -12780, []int{2856, 5089}, "2a00:23c6"}},
	weighted[location]{40, location{"DE", "FRA", "Frankfurt am Main", "Hesse", "Europe/Berlin", 5011090, 868210, []int{3320, 3209}, "2003:e5"}},
	weighted[location]{20, location{"DE", "TXL", "Berlin", "Land Berlin", "Europe/Berlin", 5252000, 1340500, []int{3209, 6805}, "2a02:8108"}},
	weighted[location]{30, location{"FR", "CDG", "Paris", "Île-de-France", "Europe/Paris", 4885660, 235220, []int{3215, 12322}, "2a01:cb00"}},
	weighted[location]{20, location{"NL", "AMS", "Amsterdam", "North Holland", "Europe/Amsterdam", 5236760, 490410, []int{1136, 33915}, "2a02:a440"}},
	weighted[location]{15, location{"ES", "MAD", "Madrid", "Madrid", "Europe/Madrid", 4041680, -370380, []int{3352}, "2a0c:5a80"}},
	weighted[location]{12, location{"PL", "WAW", "Warsaw", "Mazovia", "Europe/Warsaw", 5222970, 2101220, []int{5617}, "2a01:110f"}},
	weighted[location]{10, location{"TR", "IST", "Istanbul", "Istanbul", "Europe/Istanbul", 4100820, 2897840, []int{9121}, "2a02:ff0"}},
	weighted[location]{40, location{"IN", "BOM", "Mumbai", "Maharashtra", "Asia/Kolkata", 1907600, 7287770, []int{55836, 24560}, "2409:4040"}},
	weighted[location]{25, location{"IN", "BLR", "Bengaluru", "Karnataka", "Asia/Kolkata", 1297160, 7759460, []int{55836, 24560}, "2401:4900"}},
	weighted[location]{20, location{"SG", "SIN", "Singapore", "Singapore", "Asia/Singapore", 128970, 10385200, []int{9506}, "2406:3003"}},
	weighted[location]{20, location{"JP", "NRT", "Tokyo", "Tokyo", "Asia/Tokyo", 3568950, 13969170, []int{2516, 4713}, "240b:10"}},
	weighted[location]{10, location{"KR", "ICN", "Seoul", "Seoul", "Asia/Seoul", 3756650, 12697800, []int{4766}, "2001:2d8"}},
	weighted[location]{15, location{"ID", "CGK", "Jakarta", "Jakarta", "Asia/Jakarta", -620880, 10684560, []int{7713}, "2001:448a"}},
	weighted[location]{10, location{"VN", "SGN", "Ho Chi Minh City", "Ho Chi Minh", "Asia/Ho_Chi_Minh", 1082310, 10662970, []int{7552}, "2402:800"}},
	weighted[location]{10, location{"PH", "MNL", "Manila", "Metro Manila", "Asia/Manila", 1459950, 12098420, []int{9299}, "2001:4454"}},
	weighted[location]{20, location{"AU", "SYD", "Sydney", "New South Wales", "Australia/Sydney", -3386880, 15120930, []int{1221, 4804}, "2001:8003"}},
	weighted[location]{12, location{"NG", "LOS", "Lagos", "Lagos", "Africa/Lagos", 652440, 337920, []int{29465}, "2c0f:f4c0"}},
	weighted[location]{8, location{"ZA", "JNB", "Johannesburg", "Gauteng", "Africa/Johannesburg", -2620410, 2804730, []int{37457}, "2c0f:f8f0"}},
)

// serverLocations are where server-side clients (node, Deno, curl) run.
var serverLocations = []string{"IAD", "IAD", "IAD", "SJC", "FRA", "FRA", "SIN", "LHR", "SYD", "BOM"}

// cloudASNs are the providers server-side clients run on: AWS (twice the
// weight), Google, Microsoft, DigitalOcean, Hetzner, Cloudflare, OVH.
var cloudASNs = []int{16509, 16509, 14618, 15169, 396982, 8075, 14061, 24940, 13335, 16276}

// Postgres tables apps query through PostgREST.
var tableNames = []string{
	"todos", "profiles", "messages", "posts", "comments", "users", "orders", "products",
	"tasks", "projects", "events", "notifications", "subscriptions", "items", "chats",
	"documents", "invoices", "teams", "likes", "bookings", "countries", "settings",
}

// Columns used in select lists and filters.
var columnNames = []string{"id", "name", "title", "created_at", "updated_at", "user_id", "status", "email", "avatar_url", "content", "price", "team_id"}

// Postgres functions called through /rest/v1/rpc.
var rpcNames = []string{"get_user_profile", "search_posts", "increment_views", "get_dashboard_stats", "match_documents", "nearby_places", "get_unread_count", "handle_checkout"}

// Storage buckets and file name stems.
var bucketNames = []string{"avatars", "public", "images", "uploads", "documents", "product-images", "videos", "attachments"}
var fileStems = []string{"avatar", "cover", "logo", "photo", "thumbnail", "banner", "receipt", "report", "screenshot", "image"}
var fileExts = newChoice(
	weighted[[2]string]{40, [2]string{".png", "image/png"}},
	weighted[[2]string]{30, [2]string{".jpg", "image/jpeg"}},
	weighted[[2]string]{15, [2]string{".webp", "image/webp"}},
	weighted[[2]string]{5, [2]string{".svg", "image/svg+xml"}},
	weighted[[2]string]{6, [2]string{".pdf", "application/pdf"}},
	weighted[[2]string]{4, [2]string{".mp4", "video/mp4"}},
)

// Edge function names.
var functionNames = []string{
	"hello-world", "send-email", "stripe-webhook", "openai-chat", "resize-image", "push-notification",
	"generate-embeddings", "process-payment", "sync-users", "og-image", "slack-bot", "create-checkout-session",
	"invite-user", "daily-digest", "webhook-handler", "transcribe-audio",
}

// functionRegions are the regions edge functions run in, in the form
// deno-subhosting-events reports them.
var functionRegions = []string{
	"aws-us-east-1", "aws-us-east-1", "aws-us-west-1", "aws-eu-central-1", "aws-eu-west-2",
	"aws-ap-southeast-1", "aws-ap-northeast-1", "aws-ap-south-1", "aws-sa-east-1", "aws-ap-southeast-2",
}

// appWords name the web apps that call a project (Referer headers).
var appWords = []string{
	"acme", "pixel", "nova", "orbit", "maple", "harbor", "lumen", "cedar", "ember", "quartz",
	"atlas", "river", "sprout", "tidal", "vertex", "willow", "zenith", "bolt", "cobalt", "delta",
}

// Page paths in those apps.
var refererPaths = []string{"/", "/", "/dashboard", "/login", "/app", "/settings", "/projects", "/chat", "/checkout", "/profile"}

// Database roles that connect to Postgres and PgBouncer.
var dbUsers = newChoice(
	weighted[string]{40, "authenticator"},
	weighted[string]{20, "postgres"},
	weighted[string]{12, "supabase_admin"},
	weighted[string]{8, "supabase_auth_admin"},
	weighted[string]{8, "supabase_storage_admin"},
	weighted[string]{5, "pgbouncer"},
	weighted[string]{4, "supabase_realtime_admin"},
	weighted[string]{3, "supabase_replication_admin"},
)

// First names and mail domains for auth users.
var firstNames = []string{"alex", "sam", "maria", "li", "priya", "jonas", "emma", "noah", "olivia", "ahmed", "yuki", "lucas", "sofia", "omar", "chloe", "mateo"}
var mailDomains = []string{"gmail.com", "gmail.com", "gmail.com", "outlook.com", "yahoo.com", "icloud.com", "proton.me", "example.com", "company.io"}

// dockerIP returns an address on the self-hosted docker network 172.18.0.0/16.
func dockerIP(host int) uint32 { return 172<<24 | 18<<16 | uint32(host&0xff) }
