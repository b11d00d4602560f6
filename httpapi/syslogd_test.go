package httpapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startSyslog starts TCP and UDP syslog listeners on loopback ports,
// writing to tcpSource and udpSource.
func (ts *testServer) startSyslog(tcpSource, udpSource string) (tcpAddr, udpAddr string) {
	ts.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		ts.t.Fatal(err)
	}
	go ts.srv.ServeSyslogTCP(ln, SyslogOptions{Source: tcpSource})
	go ts.srv.ServeSyslogUDP(pc, SyslogOptions{Source: udpSource})
	return ln.Addr().String(), pc.LocalAddr().String()
}

// waitEvents polls source name until it holds n events or a minute has
// passed (syslog has no acknowledgement to wait for).
func (ts *testServer) waitEvents(name string, n int) []map[string]any {
	ts.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		evs := ts.events(name)
		if len(evs) >= n || time.Now().After(deadline) {
			return evs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSyslogNG sends messages through syslog-ng (Debian's syslog-ng-core)
// to the listener over TCP and UDP, each in both of syslog-ng's formats:
// network() writes RFC 3164 (newline-framed over TCP), syslog() writes
// RFC 5424 (octet-counted over TCP). Every message must arrive once per
// destination with its host, program, pid, severity, facility and time.
func TestSyslogNG(t *testing.T) {
	bin, err := exec.LookPath("syslog-ng")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("syslog-ng not found under CI (apt-get install -y syslog-ng-core)")
		}
		t.Skip("syslog-ng not found: skipping (apt-get install syslog-ng-core)")
	}
	ts := startServer(t, serverConfig{})
	ts.createSource("syslog-tcp")
	ts.createSource("syslog-udp")
	tcpAddr, udpAddr := ts.startSyslog("syslog-tcp", "syslog-udp")
	tcpHost, tcpPort, _ := net.SplitHostPort(tcpAddr)
	udpHost, udpPort, _ := net.SplitHostPort(udpAddr)

	dir := t.TempDir()
	conf := fmt.Sprintf(`@version: 3.38
options { keep-hostname(yes); use-dns(no); dns-cache(no); stats-freq(0); };
source s_in { stdin(); };
destination d_tcp3164 { network("%[1]s" port(%[2]s) transport("tcp") persist-name("tcp3164")); };
destination d_tcp5424 { syslog("%[1]s" port(%[2]s) transport("tcp") persist-name("tcp5424")); };
destination d_udp3164 { network("%[3]s" port(%[4]s) transport("udp") persist-name("udp3164")); };
destination d_udp5424 { syslog("%[3]s" port(%[4]s) transport("udp") persist-name("udp5424")); };
log { source(s_in); destination(d_tcp3164); destination(d_tcp5424); destination(d_udp3164); destination(d_udp5424); };
`, tcpHost, tcpPort, udpHost, udpPort)
	if err := os.WriteFile(filepath.Join(dir, "syslog-ng.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}

	// RFC 3164 lines on syslog-ng's stdin; it parses them and sends them on.
	sent := time.Now().UTC().Truncate(time.Second)
	stamp := sent.Format(time.Stamp)
	type msg struct {
		pri                      int
		text, severity, facility string
	}
	msgs := []msg{
		{pri: 14, text: "hello from syslog-ng", severity: "info", facility: "user"},
		{pri: 11, text: "payment failed code=42", severity: "error", facility: "user"},
		{pri: 132, text: "disk 91% full", severity: "warning", facility: "local0"},
	}
	var input strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&input, "<%d>%s web-1 shop[42]: %s\n", m.pri, stamp, m.text)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-F", "--no-caps", "-f", filepath.Join(dir, "syslog-ng.conf"),
		"-R", filepath.Join(dir, "persist"), "-p", filepath.Join(dir, "pid"), "-c", filepath.Join(dir, "ctl"))
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.Stdin = strings.NewReader(input.String())
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-stopped
		}
	}()

	for _, src := range []string{"syslog-tcp", "syslog-udp"} {
		evs := ts.waitEvents(src, 2*len(msgs))
		if len(evs) != 2*len(msgs) {
			t.Fatalf("%s: %d events, want %d (each message in RFC 3164 and RFC 5424): %v\nsyslog-ng output:\n%s", src, len(evs), 2*len(msgs), evs, out.String())
		}
		seen := map[string]int{}
		formats := map[string]int{}
		for _, e := range evs {
			text, _ := e["event_message"].(string)
			var m *msg
			for i := range msgs {
				if msgs[i].text == text {
					m = &msgs[i]
				}
			}
			if m == nil {
				t.Fatalf("%s: unexpected event %v", src, e)
			}
			seen[text]++
			raw, _ := at(e, "metadata.message_raw").(string)
			if strings.HasPrefix(raw, fmt.Sprintf("<%d>1 ", m.pri)) {
				formats["rfc5424"]++
			} else if strings.HasPrefix(raw, fmt.Sprintf("<%d>%s", m.pri, stamp)) {
				formats["rfc3164"]++
			}
			want := map[string]any{
				"timestamp":           float64(sent.UnixMicro()),
				"metadata.hostname":   "web-1",
				"metadata.appname":    "shop",
				"metadata.process_id": "42",
				"metadata.severity":   m.severity,
				"metadata.level":      m.severity,
				"metadata.facility":   m.facility,
				"metadata.priority":   float64(m.pri),
			}
			for path, w := range want {
				if got := at(e, path); got != w {
					t.Errorf("%s %q: %s = %#v, want %#v (line %v)", src, text, path, got, w, at(e, "metadata.message_raw"))
				}
			}
		}
		if formats["rfc5424"] != len(msgs) || formats["rfc3164"] != len(msgs) {
			t.Errorf("%s: formats received %v, want %d of each", src, formats, len(msgs))
		}
		for _, m := range msgs {
			if seen[m.text] != 2 {
				t.Errorf("%s: %q arrived %d times, want 2", src, m.text, seen[m.text])
			}
		}
	}
}

// selfSignedTLS returns a server config with a fresh self-signed
// certificate for 127.0.0.1.
func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sediment-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

// TestSyslogListenerFraming sends, over TLS, octet-counted and
// newline-framed messages mixed with blank lines, a message over the
// limit, a bad octet count and a line that is not syslog: the good ones
// are stored, the others counted.
func TestSyslogListenerFraming(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	ts.createSource("tls-syslog")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ts.srv.ServeSyslogTCP(tls.NewListener(ln, selfSignedTLS(t)), SyslogOptions{Source: "tls-syslog", MaxMessageBytes: 200})

	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	framed := func(m string) string { return fmt.Sprintf("%d %s", len(m), m) }
	stream := framed("<13>1 2025-07-10T12:00:01Z h app 1 - - octet one") +
		framed("<13>1 2025-07-10T12:00:02Z h app 1 - - octet\ntwo with a newline") +
		"\r\n<13>Jul 10 12:00:03 h app[1]: line three\n\n" +
		framed("<13>1 2025-07-10T12:00:04Z h app 1 - - "+strings.Repeat("x", 300)) +
		"<13>Jul 10 12:00:05 h app[1]: " + strings.Repeat("y", 300) + "\n" +
		"12x <13>Jul 10 12:00:06 h app[1]: bad count\n" +
		"not syslog at all\n" +
		"<13>Jul 10 12:00:07 h app[1]: last\n"
	if _, err := conn.Write([]byte(stream)); err != nil {
		t.Fatal(err)
	}
	evs := ts.waitEvents("tls-syslog", 4)
	conn.Close()
	if got := messages(evs); got != "last,line three,octet\ntwo with a newline,octet one" {
		t.Fatalf("stored %q", got)
	}
	deadline := time.Now().Add(time.Minute)
	for ts.srv.Stats().Dropped(DropUnparseableLine) != 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := ts.srv.Stats().Dropped(DropUnparseableLine); n != 4 {
		t.Errorf("skipped %d, want 4 (two too long, a bad count, not syslog)", n)
	}
}

// TestSyslogListenerShutdown: Shutdown closes the listeners and their
// connections, and what was read is stored first.
func TestSyslogListenerShutdown(t *testing.T) {
	ts := startServer(t, serverConfig{opts: Options{Now: serverNow}})
	ts.createSource("s")
	tcpAddr, udpAddr := ts.startSyslog("s", "s")
	conn, err := net.Dial("tcp", tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("<13>Jul 10 12:00:03 h app[1]: before shutdown\n")); err != nil {
		t.Fatal(err)
	}
	uc, err := net.Dial("udp", udpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	if _, err := uc.Write([]byte("<13>Jul 10 12:00:04 h app[1]: udp datagram")); err != nil {
		t.Fatal(err)
	}
	if evs := ts.waitEvents("s", 2); len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	ts.stop()
	if _, err := net.Dial("tcp", tcpAddr); err == nil {
		t.Error("the TCP listener still accepts after Shutdown")
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the connection is still open after Shutdown")
	}
}
