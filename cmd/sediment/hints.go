package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/sediment/sediment/catalog"
)

// exampleSourceName is the source the startup hint creates when there is
// none yet.
const exampleSourceName = "app.logs"

// startupHints returns what `sediment serve` tells a newcomer once it is
// ready: where its keys are, and shell lines that work as printed against
// this server (a curl that creates a source when there is none, and one
// that ingests an event). Keys are never printed: the lines read them from
// the environment variable they came from or from generated-keys.json.
func startupHints(cfg serveConfig, cat *catalog.Catalog, addr net.Addr, getenv func(string) string) []string {
	base := "http://" + dialAddr(addr)
	keysFile := filepath.Join(cfg.DataDir, generatedKeysFile)
	var pub, priv string // shell expressions giving the keys
	var lines []string
	for _, t := range cat.AccessTokens() {
		switch t.Origin {
		case catalog.OriginGeneratedPublic:
			pub = keyFromFile("public_access_token", keysFile)
		case catalog.OriginGeneratedPrivate:
			priv = keyFromFile("private_access_token", keysFile)
		case catalog.OriginEnvPublic:
			pub = "$" + publicTokenVar(getenv)
		case catalog.OriginEnvPrivate:
			priv = "$LOGFLARE_PRIVATE_ACCESS_TOKEN"
		}
	}
	switch {
	case strings.Contains(pub+priv, keysFile):
		lines = append(lines, "keys: "+keysFile+" (public_access_token may ingest; private_access_token may do everything)")
	case pub != "" || priv != "":
		lines = append(lines, "keys: from the environment (LOGFLARE_PUBLIC_ACCESS_TOKEN may ingest; LOGFLARE_PRIVATE_ACCESS_TOKEN may do everything)")
	}
	if pub == "" {
		pub = priv // the private key may ingest too
	}
	if pub == "" {
		return lines // keys made through the API only: nothing to point at
	}
	source := ""
	if srcs := cat.Sources(); len(srcs) > 0 {
		source = srcs[0].Name
	} else if priv != "" {
		source = exampleSourceName
		lines = append(lines, fmt.Sprintf(`create a source: curl -X POST '%s/api/sources' -H "Authorization: Bearer %s" -H 'Content-Type: application/json' -d '{"name":"%s"}'`,
			base, priv, exampleSourceName))
	} else {
		return lines
	}
	lines = append(lines, fmt.Sprintf(`send an event: curl -X POST '%s/api/logs?source_name=%s' -H "X-API-KEY: %s" -H 'Content-Type: application/json' -d '{"message":"hello from curl"}'`,
		base, url.QueryEscape(source), pub))
	return lines
}

// publicTokenVar names the variable the public token came from (see
// parseServeConfig).
func publicTokenVar(getenv func(string) string) string {
	if strings.TrimSpace(getenv("LOGFLARE_PUBLIC_ACCESS_TOKEN")) == "" && strings.TrimSpace(getenv("LOGFLARE_API_KEY")) != "" {
		return "LOGFLARE_API_KEY"
	}
	return "LOGFLARE_PUBLIC_ACCESS_TOKEN"
}

// keyFromFile is a shell expression printing one key of the generated
// keys file (sed is everywhere; jq is not).
func keyFromFile(field, path string) string {
	return fmt.Sprintf(`$(sed -n 's/.*"%s": *"\([^"]*\)".*/\1/p' %s)`, field, shellQuote(path))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dialAddr turns a listener's address into one a client on this machine
// can dial: the unspecified address becomes localhost.
func dialAddr(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// printStartupHints writes the hints: as plain lines with the text log
// format, so that they can be copied; as log records with the JSON one,
// so that the stream stays JSON.
func printStartupHints(w io.Writer, cfg serveConfig, a *app, log *slog.Logger) {
	lines := startupHints(cfg, a.cat, a.addr, os.Getenv)
	if cfg.LogFormat == "json" {
		for _, l := range lines {
			log.Info("hint", "text", l)
		}
		return
	}
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}
