package main

import (
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"

	"github.com/sediment/sediment/httpapi"
)

func TestSyslogFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want syslogConfig
		err  bool
	}{
		{name: "off by default"},
		{name: "a port alone binds to loopback", args: []string{"--syslog-tcp", ":5514", "--syslog-udp", "5515", "--syslog-source", "syslog"},
			want: syslogConfig{TCP: "127.0.0.1:5514", UDP: "127.0.0.1:5515", Source: "syslog"}},
		{name: "every interface when asked", args: []string{"--syslog-tcp", "0.0.0.0:6514", "--syslog-source", "s", "--syslog-tls-cert", "c.pem", "--syslog-tls-key", "k.pem", "--syslog-max-message", "8192"},
			want: syslogConfig{TCP: "0.0.0.0:6514", Source: "s", TLSCert: "c.pem", TLSKey: "k.pem", MaxMessageBytes: 8192}},
		{name: "a listener needs a source", args: []string{"--syslog-udp", ":5514"}, err: true},
		{name: "a source needs a listener", args: []string{"--syslog-source", "s"}, err: true},
		{name: "cert without key", args: []string{"--syslog-tcp", ":1", "--syslog-source", "s", "--syslog-tls-cert", "c"}, err: true},
		{name: "TLS is for TCP", args: []string{"--syslog-udp", ":1", "--syslog-source", "s", "--syslog-tls-cert", "c", "--syslog-tls-key", "k"}, err: true},
		{name: "bad address", args: []string{"--syslog-tcp", "a:b:c", "--syslog-source", "s"}, err: true},
		{name: "bad size", args: []string{"--syslog-tcp", ":1", "--syslog-source", "s", "--syslog-max-message", "-1"}, err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServeConfig(tc.args, func(string) string { return "" }, io.Discard)
			if tc.err {
				if err == nil {
					t.Fatalf("no error: %+v", cfg.Syslog)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Syslog != tc.want {
				t.Fatalf("got %+v, want %+v", cfg.Syslog, tc.want)
			}
		})
	}
}

// TestServeSyslog starts serve with a TCP syslog listener on a loopback
// port, sends a message before the source exists (dropped and counted)
// and after, and finds the second stored after shutdown.
func TestServeSyslog(t *testing.T) {
	dir := t.TempDir()
	cfg := serveConfig{DataDir: dir, PublicToken: "pub-key", PrivateToken: "priv-key",
		Syslog: syslogConfig{TCP: "127.0.0.1:0", Source: "network"}}
	r := start(t, cfg)
	if r.a.syslogTCP == nil || r.a.syslogUDP != nil {
		t.Fatalf("listeners: tcp %v udp %v", r.a.syslogTCP, r.a.syslogUDP)
	}
	send := func(msg string) {
		conn, err := net.Dial("tcp", r.a.syslogTCP.String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	send("<13>Jul 10 12:00:03 router1 kernel: before the source exists\n")
	deadline := time.Now().Add(time.Minute)
	for r.a.srv.Stats().Dropped(httpapi.DropRejected) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := r.a.srv.Stats().Dropped(httpapi.DropRejected); n != 1 {
		t.Fatalf("rejected %d, want 1", n)
	}
	created := r.mustDo("POST", "/api/sources", "priv-key", `{"name":"network"}`, 201)
	send("<13>Jul 10 12:00:04 router1 kernel: link up\n")
	for r.a.srv.Stats().Events == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	var src struct{ Token string }
	if err := json.Unmarshal([]byte(created), &src); err != nil {
		t.Fatal(err)
	}
	if got := storedMessages(t, dir)[src.Token]; len(got) != 1 || got[0] != "link up" {
		t.Fatalf("stored %v", got)
	}
}
