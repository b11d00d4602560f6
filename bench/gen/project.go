package gen

import (
	"encoding/base64"
	"strconv"
)

// Stream labels for derive: each names an independent random stream.
const (
	labelEvents  = 0x6576656e74730000 // + source: event content
	labelClock   = 0x636c6f636b000000 // + source: event times
	labelProject = 0x70726f6a00000000 // + project index: per-project data
	labelClients = 0x636c69656e740000 // + source: client pool
	labelRare    = 0x7261726500000000 // + source: which events carry the rare token
	labelObjects = 0x6f626a6563747300 // the storage object set (Options.StorageObjects)
)

// SelfHostedProject is the project ref of every self-hosted event.
const SelfHostedProject = "default"

// ProjectRefs returns the refs of the n platform projects that generators
// with this seed spread their events over, most frequent first: rank k gets
// a share proportional to 1/(k+1). Refs are 20 lowercase letters, like
// Supabase's, and the same for every source, so cross-source queries on one
// project line up. Refs are random, so two of them colliding is possible in
// principle but has probability below n²/26^20.
func ProjectRefs(seed int64, n int) []string {
	out := make([]string, max(n, 0))
	for i := range out {
		out[i] = projectRef(seed, i)
	}
	return out
}

func projectRef(seed int64, i int) string {
	r := newRNG(derive(uint64(seed), labelProject+uint64(i)))
	var b [20]byte
	for k := range b {
		b[k] = byte('a' + r.intn(26))
	}
	return string(b[:])
}

// project is everything events of one project have in common. It is derived
// from the seed and the project's rank alone, so it is the same whichever
// source or event first asks for it.
type project struct {
	ref       string
	host      string // API host, "<ref>.supabase.co"
	origin    string // "https://<ref>.supabase.co"
	appOrigin string // the project's web app, for Referer headers
	dbHost    string // "db-<ref>"
	anonKey   string // the legacy anon JWT
	publicKey string // the key realtime clients put in the URL: anonKey or a publishable key
	anonSig   string // signature prefixes of the anon and service_role keys
	svcSig    string
	issuedAt  int    // iat of the API keys
	userSeed  uint64 // derives the project's auth users (see appendUserID)
	functions []function
}

// function is one deployed edge function of a project.
type function struct {
	name         string
	id           string // UUID
	version      string // deployment version, a decimal string
	deploymentID string // "<ref>_<id>_<version>"
	region       string // "aws-<region>" where its events run
}

// projectSet holds a generator's projects and the skewed draw over them.
// Per-project data is built on first use, so a million projects cost only
// their refs until events touch them.
type projectSet struct {
	seed  int64
	refs  []string
	data  []*project
	ranks zipf
}

func newProjectSet(seed int64, shape Shape, n int) *projectSet {
	ps := &projectSet{seed: seed}
	if shape == SelfHosted {
		ps.refs = []string{SelfHostedProject}
	} else {
		ps.refs = ProjectRefs(seed, n)
	}
	ps.data = make([]*project, len(ps.refs))
	ps.ranks = newZipf(len(ps.refs))
	return ps
}

// pick draws a project rank.
func (ps *projectSet) pick(r *rng) int { return ps.ranks.pick(r) }

// get returns the project of rank i.
func (ps *projectSet) get(i int) *project {
	if p := ps.data[i]; p != nil {
		return p
	}
	p := buildProject(ps.seed, i, ps.refs[i], len(ps.refs) == 1 && ps.refs[0] == SelfHostedProject)
	ps.data[i] = p
	return p
}

func buildProject(seed int64, i int, ref string, selfHosted bool) *project {
	r := newRNG(derive(uint64(seed), labelProject+uint64(i)) ^ 0xa5a5a5a5)
	p := &project{ref: ref, dbHost: "db-" + ref}
	if selfHosted {
		p.host = "localhost:8000"
		p.origin = "http://localhost:8000"
		p.appOrigin = "http://localhost:3000"
	} else {
		p.host = ref + ".supabase.co"
		p.origin = "https://" + p.host
		switch r.intn(4) {
		case 0:
			p.appOrigin = "https://" + appWords[r.intn(len(appWords))] + "-" + appWords[r.intn(len(appWords))] + ".vercel.app"
		case 1:
			p.appOrigin = "https://www." + appWords[r.intn(len(appWords))] + appWords[r.intn(len(appWords))] + ".com"
		case 2:
			p.appOrigin = "https://app." + appWords[r.intn(len(appWords))] + ".io"
		default:
			p.appOrigin = "http://localhost:" + strconv.Itoa(3000+r.intn(3)*1000)
		}
	}
	p.issuedAt = 1640995200 + r.intn(3*365*86400)
	p.userSeed = r.next()
	p.anonSig = randomBase64URL(&r, 6)
	p.svcSig = randomBase64URL(&r, 6)
	payload := `{"iss":"supabase","ref":"` + ref + `","role":"anon","iat":` + strconv.Itoa(p.issuedAt) +
		`,"exp":` + strconv.Itoa(p.issuedAt+10*365*86400) + `}`
	p.anonKey = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." +
		base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + p.anonSig + randomBase64URL(&r, 37)

	// Projects created since 2025 use the new publishable API keys.
	p.publicKey = p.anonKey
	if r.intn(2) == 0 {
		p.publicKey = "sb_publishable_" + randomBase64URL(&r, 31)
	}

	nf := 1 + r.intn(6)
	region := functionRegions[r.intn(len(functionRegions))]
	for k := range nf {
		name := functionNames[(i*7+k*3+r.intn(2))%len(functionNames)]
		dup := false
		for _, f := range p.functions {
			dup = dup || f.name == name
		}
		if dup {
			name += "-" + strconv.Itoa(k+1)
		}
		id := uuidString(r.next(), r.next())
		version := strconv.Itoa(1 + r.intn(120))
		p.functions = append(p.functions, function{
			name: name, id: id, version: version,
			deploymentID: ref + "_" + id + "_" + version,
			region:       region,
		})
	}
	return p
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func randomBase64URL(r *rng, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = base64URLAlphabet[r.intn(64)]
	}
	return string(b)
}

// userRanks skews which of a project's users act: a few are very active.
var userRanks = newZipf(2000)

// appendUserID appends the UUID of the project's k-th auth user.
func appendUserID(dst []byte, p *project, k int) []byte {
	return appendUUIDBits(dst, finalize(p.userSeed+uint64(k)), finalize(p.userSeed^(uint64(k)<<32|0xbeef)))
}

// appendUserEmail appends the e-mail address of the project's k-th user.
func appendUserEmail(dst []byte, p *project, k int) []byte {
	h := finalize(p.userSeed ^ uint64(k)*0x9e3779b97f4a7c15)
	dst = append(dst, firstNames[h%uint64(len(firstNames))]...)
	dst = append(dst, '.')
	dst = append(dst, firstNames[(h>>8)%uint64(len(firstNames))]...)
	dst = strconv.AppendUint(dst, h>>48%1000, 10)
	dst = append(dst, '@')
	return append(dst, mailDomains[(h>>16)%uint64(len(mailDomains))]...)
}
