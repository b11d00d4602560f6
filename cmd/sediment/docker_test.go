package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Docker cannot run where the tests run, so these tests read the
// repository's Dockerfile and .dockerignore and check what a build and a
// container would depend on.

// dockerInstruction is one Dockerfile instruction, continuation lines
// joined.
type dockerInstruction struct {
	line int
	cmd  string // upper case
	args string
}

func readDockerfile(t *testing.T) []dockerInstruction {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []dockerInstruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, `\`) {
			cur.WriteString(strings.TrimSuffix(trimmed, `\`) + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatal("Dockerfile ends inside a continued line")
	}
	return out
}

// TestDockerfile checks the image: two stages, a static build, a non-root
// user, the /data volume, and a healthcheck and entrypoint that run
// subcommands this binary has.
func TestDockerfile(t *testing.T) {
	known := map[string]bool{"FROM": true, "WORKDIR": true, "COPY": true, "RUN": true, "ARG": true, "ENV": true, "USER": true,
		"VOLUME": true, "EXPOSE": true, "HEALTHCHECK": true, "ENTRYPOINT": true, "CMD": true, "LABEL": true}
	var froms, users []string
	var entrypoint, cmd, health []string
	var volume []string
	static := false
	copiedBinary := ""
	for _, in := range readDockerfile(t) {
		if !known[in.cmd] {
			t.Errorf("line %d: unknown instruction %q", in.line, in.cmd)
		}
		jsonArgs := func(s string) []string {
			var v []string
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				t.Errorf("line %d: %s %s: not a JSON array (exec form): %v", in.line, in.cmd, s, err)
			}
			return v
		}
		switch in.cmd {
		case "FROM":
			froms = append(froms, in.args)
		case "RUN":
			if strings.Contains(in.args, "CGO_ENABLED=0") && strings.Contains(in.args, "./cmd/sediment") {
				static = true
			}
		case "COPY":
			if f := strings.Fields(in.args); len(f) >= 3 && strings.HasSuffix(f[len(f)-2], "/sediment") {
				copiedBinary = f[len(f)-1]
			}
		case "USER":
			users = append(users, in.args)
		case "VOLUME":
			volume = jsonArgs(in.args)
		case "ENTRYPOINT":
			entrypoint = jsonArgs(in.args)
		case "CMD":
			cmd = jsonArgs(in.args)
		case "HEALTHCHECK":
			_, c, ok := strings.Cut(in.args, "CMD ")
			if !ok {
				t.Errorf("line %d: HEALTHCHECK without CMD", in.line)
				continue
			}
			health = jsonArgs(strings.TrimSpace(c))
		}
	}
	if len(froms) != 2 || !strings.HasSuffix(froms[0], " AS build") || !strings.Contains(froms[1], "distroless/static") {
		t.Errorf("want a build stage and a distroless static stage, got %q", froms)
	}
	if !static {
		t.Error("the binary is not built with CGO_ENABLED=0")
	}
	if len(users) == 0 || users[len(users)-1] == "root" || strings.HasPrefix(users[len(users)-1], "0") {
		t.Errorf("the image must run as a non-root user: USER %q", users)
	}
	if len(volume) != 1 || volume[0] != "/data" {
		t.Errorf("VOLUME %q, want [/data]", volume)
	}
	if copiedBinary == "" || len(entrypoint) != 1 || entrypoint[0] != copiedBinary {
		t.Errorf("ENTRYPOINT %q does not run the binary copied to %q", entrypoint, copiedBinary)
	}
	if len(cmd) == 0 || commands[cmd[0]].run == nil {
		t.Errorf("CMD %q is not a sediment subcommand", cmd)
	}
	if len(health) < 2 || health[0] != copiedBinary || commands[health[1]].run == nil {
		t.Errorf("HEALTHCHECK %q must run a subcommand of the binary (the image has no wget)", health)
	}
}

// dockerignorePatterns reads .dockerignore into regular expressions over
// slash-separated paths relative to the context root, as Docker matches
// them: '**' any number of directories, '*' and '?' within a name, a
// leading '/' ignored, and an excluded directory excluding its contents.
func dockerignorePatterns(t *testing.T) []*regexp.Regexp {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var out []*regexp.Regexp
	for _, line := range strings.Split(string(data), "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if strings.HasPrefix(p, "!") {
			t.Fatalf(".dockerignore: exceptions (%q) are not handled by this test", p)
		}
		p = strings.TrimPrefix(p, "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case p[i] == '*':
				re.WriteString("[^/]*")
			case p[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		}
		re.WriteString("(/.*)?$")
		out = append(out, regexp.MustCompile(re.String()))
	}
	return out
}

func dockerIgnored(patterns []*regexp.Regexp, path string) bool {
	for _, re := range patterns {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// TestDockerignore: the build context keeps every file the build reads
// (Go sources, go.mod, go.sum, embedded files) and leaves out data
// directories, keys, node_modules and worktrees.
func TestDockerignore(t *testing.T) {
	patterns := dockerignorePatterns(t)
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		needed := strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") ||
			rel == "go.mod" || rel == "go.sum" ||
			strings.HasPrefix(rel, "catalog/supabase/") || strings.HasPrefix(rel, "ui/static/")
		if needed {
			checked++
			if dockerIgnored(patterns, rel) {
				t.Errorf("%s is needed by the build but .dockerignore leaves it out", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
	for _, p := range []string{"data/catalog.json", "data/sources/x/wal/0000000000000001.wal", "data/generated-keys.json",
		"deploy/data/catalog.json", "snapshots/s1/catalog.json", "ui/node_modules/x/index.js", "node_modules/a.js",
		"tls/server.key", "tls/server.pem", ".git/HEAD", "wt/ops/go.mod", ".worktrees/a/main.go", "sediment", "engine/engine.test",
		"other/generated-keys.json", ".env"} {
		if !dockerIgnored(patterns, p) {
			t.Errorf("%s would be sent to the Docker daemon", p)
		}
	}
}
