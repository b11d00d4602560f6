package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sediment/sediment/catalog"
	"github.com/sediment/sediment/engine"
	"github.com/sediment/sediment/internal/vec"
	"github.com/sediment/sediment/query/endpoints"
	"github.com/sediment/sediment/sql"
	"github.com/sediment/sediment/sql/scan"
)

func init() {
	commands["query"] = command{summary: "run SQL against a data directory", run: runQuery}
}

// runQuery is `sediment query`: run SQL (the dialect of query endpoints)
// over the sources of a data directory, read-only, and print the rows.
func runQuery(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("query", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dataDir := fl.String("data-dir", "./data", "data directory")
	format := fl.String("format", "table", "output: table or json (Logflare's {\"result\": [...]})")
	maxRows := fl.Int("max-rows", 1000, "rows to print at most")
	explain := fl.Bool("explain", false, "print the optimised plan instead of running the query")
	repeat := fl.Int("repeat", 1, "run the query this many times (timing; the last result is printed)")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	queryMemory := fl.String("query-memory", "512MiB", "memory the query may hold (joins, sorts, groups, the result); past it the query fails saying so")
	endpoint := fl.String("endpoint", "", "run the SQL over this query endpoint's CTEs (by name), its @parameters bound by --param")
	var params paramFlags
	fl.Var(&params, "param", "bind a parameter, name=value (repeatable)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: sediment query [--data-dir DIR] [--format table|json] [--endpoint NAME] [--param name=value] 'SQL'")
		fmt.Fprintln(stderr, "Source names are table names: select count(*) from `cloudflare.logs.prod`")
		fmt.Fprintln(stderr, "A local, read-only tool: the rules endpoints apply to their consumers do not apply")
		fmt.Fprintln(stderr, "(select * works). Timestamps print as microseconds and UTC.")
		printFlags(stderr, fl, false)
	}
	if err := fl.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 || (*format != "table" && *format != "json") {
		fl.Usage()
		return 2
	}
	memLimit, err := parseBytes(*queryMemory)
	if err != nil || memLimit == 0 {
		fmt.Fprintf(stderr, "sediment query: --query-memory: want a size above 0, e.g. 512MiB, got %q\n", *queryMemory)
		return 2
	}
	if _, err := os.Stat(*dataDir); err != nil {
		fmt.Fprintln(stderr, "sediment query:", err)
		return 2
	}
	eng, err := engine.Open(*dataDir, &engine.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(stderr, "sediment query:", err)
		return 1
	}
	defer eng.Close()
	cat, err := catalog.Open(*dataDir, &catalog.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(stderr, "sediment query:", err)
		return 1
	}
	svc := endpoints.New(eng, cat, &endpoints.Options{DisableBackground: true, QueryMemory: memLimit, QueryMemorySetting: "--query-memory"})
	defer svc.Close()
	if *explain {
		plan, err := svc.ExplainLocal(fl.Arg(0), endpoints.LocalOptions{Params: params.m, MaxRows: *maxRows, Endpoint: *endpoint})
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
		fmt.Fprintln(stdout, plan)
		return 0
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "sediment query:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "sediment query:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var res *sql.Result
	var took []time.Duration
	var warnings *scan.Warnings
	for range max(*repeat, 1) {
		res.Release() // the previous run's
		start := time.Now()
		// What the answer misses (data set aside as damaged) is listed,
		// not left out silently.
		warnings = &scan.Warnings{}
		res, err = svc.QueryLocal(scan.WithWarnings(context.Background(), warnings), fl.Arg(0), endpoints.LocalOptions{Params: params.m, MaxRows: *maxRows, Endpoint: *endpoint})
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
		took = append(took, time.Since(start))
	}
	defer res.Release()
	if *format == "json" {
		b := []byte(`{"result":`)
		b = endpoints.AppendWarnings(res.AppendJSON(b), warnings.List())
		b = append(b, "}\n"...)
		stdout.Write(b)
		return 0
	}
	printTable(stdout, res)
	for _, w := range warnings.List() {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if len(took) == 1 {
		fmt.Fprintf(stderr, "%d rows in %s\n", res.Len, took[0].Round(time.Microsecond))
	} else {
		slices.Sort(took)
		fmt.Fprintf(stderr, "%d rows; %d runs: min %s, median %s, max %s\n", res.Len, len(took),
			took[0].Round(time.Microsecond), took[len(took)/2].Round(time.Microsecond), took[len(took)-1].Round(time.Microsecond))
	}
	return 0
}

// printTable writes a result as aligned columns, one row per line, with
// values as their JSON text (records as JSON) and timestamps as
// microseconds with the UTC time beside them.
func printTable(w io.Writer, res *sql.Result) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(res.Names, "\t"))
	one := &sql.Result{Names: res.Names, Types: res.Types, Cols: res.Cols, Len: res.Len}
	rows := jsonRows(one)
	for c, col := range res.Cols {
		if col.Type != vec.Timestamp {
			continue
		}
		for r := range rows {
			if !col.IsNull(r) {
				rows[r][c] += " (" + time.UnixMicro(col.Ints[r]).UTC().Format("2006-01-02T15:04:05.000000Z") + ")"
			}
		}
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// jsonRows renders every cell as compact JSON text.
func jsonRows(res *sql.Result) [][]string {
	out := make([][]string, res.Len)
	for i := range out {
		out[i] = make([]string, len(res.Cols))
		for c := range res.Cols {
			out[i][c] = sql.CellJSON(res, c, i)
		}
	}
	return out
}

// paramFlags collects --param name=value.
type paramFlags struct{ m map[string]string }

func (p *paramFlags) String() string { return "" }
func (p *paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want name=value, got %q", s)
	}
	if p.m == nil {
		p.m = map[string]string{}
	}
	p.m[k] = v
	return nil
}
