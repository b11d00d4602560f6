package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Every flag of `sediment serve` can also be set by an environment
// variable: SEDIMENT_ and the flag's name in upper case with '-' as '_'
// (--block-rows is SEDIMENT_BLOCK_ROWS). Precedence, highest first:
//
//	the command line > SEDIMENT_* > Logflare's variables (LOGFLARE_*, PHX_HTTP_PORT) > the default
//
// The variables are derived from the FlagSet itself, so a flag added
// later gets its variable without further code.

// flagEnvPrefix starts the name of every flag's environment variable.
const flagEnvPrefix = "SEDIMENT_"

// flagEnvName returns the environment variable of flag name.
func flagEnvName(name string) string {
	return flagEnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyFlagEnv sets every flag of fs whose environment variable is set
// (and not blank) to the variable's value. Call it after the flags are
// defined and before fs.Parse, so that the command line wins. A value the
// flag refuses is an error naming the variable.
func applyFlagEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil {
			return
		}
		name := flagEnvName(f.Name)
		v := getenv(name)
		if strings.TrimSpace(v) == "" {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = fmt.Errorf("%s=%q: %v", name, v, serr)
		}
	})
	return err
}

// isBoolFlag reports whether a flag takes no value (--supabase, not
// --supabase true).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagValueNames name the value of flags in --help where the type alone
// says too little.
var flagValueNames = map[string]string{
	"listen": "ADDR", "debug-listen": "ADDR", "syslog-tcp": "ADDR", "syslog-udp": "ADDR",
	"data-dir": "DIR", "snapshot-dir": "DIR",
	"ack-mode": "MODE", "log-level": "LEVEL", "log-format": "FORMAT",
	"memory-limit": "SIZE", "page-bytes": "SIZE", "max-disk-bytes": "SIZE", "retention-days": "DAYS",
	"zstd": "FLUSH/COMPACT", "syslog-source": "SOURCE",
	"syslog-tls-cert": "FILE", "syslog-tls-key": "FILE",
}

// flagValueName is the placeholder --help shows after a flag that takes a
// value; "" for a boolean flag, which takes none.
func flagValueName(f *flag.Flag) string {
	if isBoolFlag(f) {
		return ""
	}
	if n := flagValueNames[f.Name]; n != "" {
		return n
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "DURATION"
		case int, int64, uint, uint64:
			return "N"
		}
	}
	return "VALUE"
}

// printFlags writes every flag of fs, sorted by name, each with its value
// placeholder (none for a boolean flag), its usage, its default (once:
// not when the usage states it already, nor when it is the zero value)
// and, with env, its environment variable (serve's flags have them).
func printFlags(w io.Writer, fs *flag.FlagSet, env bool) {
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	for _, f := range flags {
		head := "  --" + f.Name
		if v := flagValueName(f); v != "" {
			head += " " + v
		}
		fmt.Fprintln(w, head)
		usage := f.Usage
		if !strings.Contains(usage, "(default") && !zeroDefault(f) {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintln(w, "      "+usage)
		if env {
			fmt.Fprintln(w, "      env "+flagEnvName(f.Name))
		}
	}
}

// zeroDefault reports whether a flag's default is its type's zero value,
// which --help does not print.
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}
