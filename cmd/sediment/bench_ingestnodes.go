package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sediment/sediment/bench"
)

// benchIngestNodes is `sediment bench ingest-nodes`: the ingest rate of
// one, then two (or more) `serve --role ingest` processes sharing an
// object store, over HTTP.
func benchIngestNodes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f := newBenchFlags("ingest-nodes", 1_000_000, stderr, "usage: sediment bench ingest-nodes --object-store s3://bucket/prefix [flags]\n\n"+
		"For each count in --nodes, starts that many 'sediment serve --role ingest' processes on\n"+
		"the object store (a fresh prefix under --object-store per run; its endpoint and\n"+
		"credentials in --server-args or the AWS_* environment), sends --events generated events\n"+
		"to them at once over HTTP (--connections in all, split evenly between the nodes, each\n"+
		"node its share of the events), and reports the ingest rate, the nodes' CPU time while\n"+
		"they were sent, and how long after the last acknowledgement every node had published\n"+
		"what it flushed. The nodes and the senders share this machine's cores.")
	store := f.fs.String("object-store", "", "s3://bucket/prefix the nodes share (required; each run uses a new prefix under it)")
	counts := f.fs.String("nodes", "1,2", "numbers of ingest nodes to measure, comma-separated")
	conns := f.fs.Int("connections", 8, "concurrent connections in all, split between the nodes")
	batch := f.fs.Int("batch", 500, "events per request")
	ackMode := f.fs.String("ack-mode", "sync", "the nodes' --ack-mode: sync or buffered")
	serverArgs := f.fs.String("server-args", "", "more 'sediment serve' flags for every node, space-separated (e.g. \"--object-store-endpoint http://127.0.0.1:9000 --object-store-path-style\")")
	serverLog := f.fs.String("server-log", "", "append the nodes' logs to this file")
	storePID := f.fs.Int("store-pid", 0, "the object store's process id when it runs on this machine (MinIO), to report its CPU time")
	if err := f.parse(args); err != nil {
		return usageError("ingest-nodes", err, stderr)
	}
	if !strings.HasPrefix(*store, "s3://") {
		return usageError("ingest-nodes", fmt.Errorf("--object-store s3://bucket/prefix is required"), stderr)
	}
	var ns []int
	for _, s := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return usageError("ingest-nodes", fmt.Errorf("--nodes: %q is not a number of nodes", s), stderr)
		}
		ns = append(ns, n)
	}
	bin, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "sediment bench ingest-nodes:", err)
		return 1
	}
	so := bench.ServerOptions{Binary: bin, Args: append([]string{"--ack-mode", *ackMode}, strings.Fields(*serverArgs)...)}
	if *serverLog != "" {
		lf, err := os.OpenFile(*serverLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "sediment bench ingest-nodes:", err)
			return 1
		}
		defer lf.Close()
		so.Log = lf
	}
	machine := bench.ThisMachine()
	run := time.Now().UTC().Format("20060102T150405")
	var results []*bench.IngestNodesResult
	for i, n := range ns {
		o := so
		prefix := strings.TrimSuffix(*store, "/") + fmt.Sprintf("/bench-%s-%d-%dnodes", run, i+1, n)
		o.Args = append(append([]string(nil), so.Args...), "--object-store", prefix)
		res, err := bench.RunIngestNodes(ctx, bench.IngestNodesOptions{Dataset: f.dataset, Server: o, Nodes: n,
			Connections: *conns, BatchSize: *batch, StorePID: *storePID, Progress: f.progress})
		if err != nil {
			fmt.Fprintf(stderr, "sediment bench ingest-nodes: %d node(s): %v\n", n, err)
			return 1
		}
		results = append(results, res)
	}
	if f.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"machine": machine, "dataset": f.dataset.Info(), "connections": *conns,
			"batch": *batch, "ack_mode": *ackMode, "results": results}); err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "machine: %s\n", machine)
	fmt.Fprintf(stdout, "events: %d (%s shape), %d connections in all, %d events per request, --ack-mode %s\n\n",
		f.dataset.Events, f.dataset.Shape, *conns, *batch, *ackMode)
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "nodes\tevents/s\tMB/s\tseconds\tnodes' CPU s\tper 1M events\tsenders' CPU s\tstore CPU s\tpublished after s\tstop s\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", r.Nodes, r.EventsPerS, float64(r.BodyBytes)/r.Seconds/1e6,
			r.Seconds, r.ServerCPUSeconds, r.ServerCPUPerMillionEv, r.ClientCPUSeconds, r.StoreCPUSeconds, r.PublishedAfterSeconds, r.StoppedAfterSeconds)
	}
	tw.Flush()
	return 0
}
