package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/sediment/sediment/httpapi"
)

// syslogConfig is the syslog listener of `sediment serve`, off unless an
// address is given.
type syslogConfig struct {
	// TCP and UDP are the listen addresses ("" is off). An address without
	// a host (":5514" or "5514") binds to loopback: syslog carries no key,
	// so listening beyond the machine must be asked for by naming the
	// interface (0.0.0.0:5514).
	TCP, UDP string
	// TLSCert and TLSKey, both set, make the TCP listener speak TLS
	// (RFC 5425).
	TLSCert, TLSKey string
	// Source is the name or token of the source every message goes to.
	Source string
	// MaxMessageBytes bounds one message (0: 64 KiB).
	MaxMessageBytes int
}

func (c *syslogConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.TCP, "syslog-tcp", "", "listen for syslog over TCP (RFC 5424 or 3164, octet-counted or one per line) on this address, e.g. :5514 (a port alone binds to 127.0.0.1; name 0.0.0.0 to listen beyond this machine)")
	fs.StringVar(&c.UDP, "syslog-udp", "", "listen for syslog over UDP on this address, e.g. :5514 (a port alone binds to 127.0.0.1)")
	fs.StringVar(&c.TLSCert, "syslog-tls-cert", "", "PEM certificate file: the TCP syslog listener speaks TLS (with --syslog-tls-key)")
	fs.StringVar(&c.TLSKey, "syslog-tls-key", "", "PEM private key file of --syslog-tls-cert")
	fs.StringVar(&c.Source, "syslog-source", "", "name or token of the source syslog messages are stored in (required with --syslog-tcp or --syslog-udp)")
	fs.IntVar(&c.MaxMessageBytes, "syslog-max-message", 0, "longest syslog message kept, in bytes (default 65536)")
}

// validate checks the flags and fills in loopback hosts.
func (c *syslogConfig) validate() error {
	if c.TCP == "" && c.UDP == "" {
		if c.Source != "" || c.TLSCert != "" || c.TLSKey != "" {
			return errors.New("--syslog-source and --syslog-tls-* need --syslog-tcp or --syslog-udp")
		}
		return nil
	}
	if c.Source == "" {
		return errors.New("--syslog-tcp and --syslog-udp need --syslog-source: the source syslog messages are stored in")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--syslog-tls-cert and --syslog-tls-key go together")
	}
	if c.TLSCert != "" && c.TCP == "" {
		return errors.New("--syslog-tls-cert needs --syslog-tcp (TLS is for TCP)")
	}
	if c.MaxMessageBytes < 0 || c.MaxMessageBytes > 16<<20 {
		return errors.New("--syslog-max-message must be between 1 and 16777216")
	}
	var err error
	if c.TCP, err = loopbackByDefault(c.TCP); err != nil {
		return fmt.Errorf("--syslog-tcp: %w", err)
	}
	if c.UDP, err = loopbackByDefault(c.UDP); err != nil {
		return fmt.Errorf("--syslog-udp: %w", err)
	}
	return nil
}

// loopbackByDefault gives an address without a host the host 127.0.0.1.
func loopbackByDefault(addr string) (string, error) {
	if addr == "" {
		return "", nil
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// startSyslog starts the configured listeners on srv; Server.Shutdown
// stops them. It returns the addresses listened on.
func startSyslog(c syslogConfig, srv *httpapi.Server, log *slog.Logger) (tcp, udp net.Addr, err error) {
	opts := httpapi.SyslogOptions{Source: c.Source, MaxMessageBytes: c.MaxMessageBytes}
	var ln net.Listener
	if c.TCP != "" {
		if ln, err = net.Listen("tcp", c.TCP); err != nil {
			return nil, nil, fmt.Errorf("syslog tcp listener: %w", err)
		}
		if c.TLSCert != "" {
			cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
			if err != nil {
				ln.Close()
				return nil, nil, fmt.Errorf("syslog tls: %w", err)
			}
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		}
		tcp = ln.Addr()
	}
	var pc net.PacketConn
	if c.UDP != "" {
		if pc, err = net.ListenPacket("udp", c.UDP); err != nil {
			if ln != nil {
				ln.Close()
			}
			return nil, nil, fmt.Errorf("syslog udp listener: %w", err)
		}
		udp = pc.LocalAddr()
	}
	if ln != nil {
		go func() {
			if err := srv.ServeSyslogTCP(ln, opts); err != nil {
				log.Error("syslog tcp listener stopped", "err", err)
			}
		}()
		log.Info("syslog listener", "transport", "tcp", "addr", tcp.String(), "tls", c.TLSCert != "", "source", c.Source)
	}
	if pc != nil {
		go func() {
			if err := srv.ServeSyslogUDP(pc, opts); err != nil {
				log.Error("syslog udp listener stopped", "err", err)
			}
		}()
		log.Info("syslog listener", "transport", "udp", "addr", udp.String(), "source", c.Source)
	}
	return tcp, udp, nil
}
