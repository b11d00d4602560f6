package gen

// storage.logs.prod.2: Storage API (pino) logs. metadata.context is an
// array of one object, as Vector's index assignment creates it.

var storageSystem = newChoice(
	weighted[[2]string]{30, [2]string{"info", "[Server] Started Successfully"}},
	weighted[[2]string]{25, [2]string{"info", "Server listening at http://0.0.0.0:5000"}},
	weighted[[2]string]{15, [2]string{"info", "[Migrations] Finished"}},
	weighted[[2]string]{10, [2]string{"info", "[Admin Server] Started Successfully"}},
	weighted[[2]string]{10, [2]string{"error", "Object not found"}},
	weighted[[2]string]{10, [2]string{"warn", "[Storage] InvalidJWT: jwt expired"}},
)

func (g *Generator) appendStorage(dst []byte, ts int64) []byte {
	r := &g.r
	pi := g.projects.pick(r)
	p := g.projects.get(pi)
	c := g.clients.pick(r, pi)
	platform := g.opts.Shape == Platform
	var reqID [36]byte
	appendUUID(reqID[:0], r) // fills the array in place

	level := "info"
	if platform {
		dst = append(dst, '{')
	} else {
		dst = append(dst, `{"appname":"supabase-storage",`...)
	}
	dst = g.appendMessageKey(dst)
	dst = append(dst, '"')
	if r.intn(100) < 8 {
		s := storageSystem.pick(r)
		level = s[0]
		dst = append(dst, s[1]...)
	} else {
		q := g.reqs.draw(r, &storageKinds, p)
		switch {
		case q.status >= 500:
			level = "error"
		case q.status >= 400:
			level = "warn"
		}
		ip := c.ip
		if !platform {
			ip = "172.18.0.1"
		}
		dst = append(dst, q.method...)
		dst = append(dst, " | "...)
		dst = appendInt(dst, q.status)
		dst = append(dst, " | "...)
		dst = append(dst, ip...)
		dst = append(dst, " | "...)
		dst = append(dst, reqID[:]...)
		dst = append(dst, " | "...)
		// Storage sees the path after Kong strips /storage/v1.
		dst = append(dst, q.path[len("/storage/v1"):]...)
		dst = append(dst, " | "...)
		dst = append(dst, c.ua.ua...)
	}
	// One storage container self-hosted; two per project on the platform.
	host := finalize(uint64(g.opts.Seed) ^ uint64(pi)<<8)
	pid := 1
	dst = append(dst, `","metadata":{"context":[{"host":"`...)
	if platform {
		host += uint64(r.intn(2))
		pid = 7 + int(host%5)*6
		dst = append(dst, "storage-api-"...)
	}
	dst = appendHex(dst, finalize(host), 12)
	dst = append(dst, `","pid":`...)
	dst = appendInt(dst, pid)
	dst = append(dst, `}],"level":"`...)
	dst = append(dst, level...)
	dst = append(dst, `","project":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, '"')
	if platform {
		dst = append(dst, `,"reqId":"`...)
		dst = append(dst, reqID[:]...)
		dst = append(dst, '"')
	}
	dst = append(dst, `,"tenantId":"`...)
	dst = append(dst, p.ref...)
	dst = append(dst, `","timestamp":"`...)
	dst = appendRFC3339(dst, g.cal.at(ts), 3)
	dst = append(dst, `"}`...)
	dst = g.appendTimestamp(dst, ts, g.nativeDigits())
	return append(dst, '}')
}

// storageKinds: requests that reach the Storage API.
var storageKinds = newChoice(
	weighted[apiKind]{85, kindStorageObject},
	weighted[apiKind]{15, kindStorageRender},
)
