package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/sediment/sediment/objstore"
)

// Roles of `sediment serve --role` (docs/scale.md).
const (
	roleAll    = "all"    // ingest and query: one node, the default
	roleIngest = "ingest" // takes events, publishes its segments
	roleQuery  = "query"  // answers queries from the store and the ingest nodes
)

// objectStoreConfig is serve's configuration for object storage
// (--object-store and the flags that go with it). Its zero value, no
// --object-store, is a server without one: exactly Sediment on a local
// data directory.
type objectStoreConfig struct {
	// S3 is where the store is; S3.Bucket == "" means no object store.
	S3 objstore.S3Config
	// CacheSize bounds the local cache of segment chunks read from the
	// store (--cache-size); CacheDir is where it lives (default
	// <data-dir>/cache).
	CacheSize int64
	CacheDir  string
	// Role is roleAll, roleIngest or roleQuery.
	Role string
	// NodeID names this node's segments in the store (--node-id; default
	// the one kept in the data directory, made on first start).
	NodeID string
	// IngestNodes are the base URLs of the ingest nodes a query node asks
	// for the events they have not published (--ingest-nodes).
	IngestNodes []string
	// GCInterval is how often unlisted segment objects are collected
	// (--gc-interval; 0: the default, 10 minutes).
	GCInterval time.Duration
	// ClusterKey authenticates nodes to each other's internal routes
	// (--cluster-key): ingest nodes serve their unsealed events to query
	// nodes that present it.
	ClusterKey string
	// CatalogSync is how often the shared catalog is read for other
	// nodes' changes (0: defaultCatalogSync; tests shorten it).
	CatalogSync time.Duration
	// ManifestMaxAge bounds how stale a manifest a query node's query
	// may use (--manifest-max-age, default 1s); 0: none, every query
	// revalidates it with a conditional GET.
	ManifestMaxAge time.Duration
	// UnsealedMaxAge is how long a query node shares an ingest node's
	// answer between queries (--unsealed-max-age; 0: every query asks).
	UnsealedMaxAge time.Duration
	// HeldPartBytes bounds the ingest nodes' head parts a query node
	// holds between queries (remote.QueryOptions.MaxHeldPartBytes); set
	// from --memory-limit (an eighth: a query node has no heads of its
	// own), 0 for remote's default.
	HeldPartBytes int64
}

// enabled reports whether an object store is configured.
func (c objectStoreConfig) enabled() bool { return c.S3.Bucket != "" }

// defaultCacheSize is --cache-size's default.
const defaultCacheSize = 10 << 30

// defaultGCInterval is --gc-interval's default.
const defaultGCInterval = 10 * time.Minute

// objectStoreFlags holds the raw values of the flags until parse.
type objectStoreFlags struct {
	url, endpoint, region, accessKey, secretKey, cacheSize, cacheDir, role, nodeID, ingestNodes, clusterKey string
	pathStyle                                                                                               bool
	gcInterval, manifestMaxAge, unsealedMaxAge                                                              time.Duration
}

// registerObjectStoreFlags defines the object storage flags on fs and
// returns the function that, after fs.Parse, checks them and fills cfg.
func registerObjectStoreFlags(fs *flag.FlagSet, getenv func(string) string, cfg *objectStoreConfig) func() error {
	f := &objectStoreFlags{}
	fs.StringVar(&f.url, "object-store", "", "keep sealed segments in S3-compatible object storage at s3://BUCKET/PREFIX (docs/scale.md); off by default: everything stays in --data-dir")
	fs.StringVar(&f.endpoint, "object-store-endpoint", "", "the store's endpoint, http(s)://host[:port] (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS S3)")
	fs.StringVar(&f.region, "object-store-region", "", "the store's region (default $AWS_REGION or $AWS_DEFAULT_REGION)")
	fs.BoolVar(&f.pathStyle, "object-store-path-style", false, "address buckets as endpoint/bucket, as MinIO and most self-hosted stores need (default $AWS_S3_FORCE_PATH_STYLE)")
	fs.StringVar(&f.accessKey, "object-store-access-key", "", "access key id (default $AWS_ACCESS_KEY_ID, else the shared credentials file); prefer the environment to the command line")
	fs.StringVar(&f.secretKey, "object-store-secret-key", "", "secret access key (default $AWS_SECRET_ACCESS_KEY); prefer the environment to the command line")
	fs.StringVar(&f.cacheSize, "cache-size", "", "with --object-store: disk space for the cache of segment chunks read from the store (default 10GiB)")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "with --object-store: directory of that cache (default <data-dir>/cache)")
	fs.StringVar(&f.role, "role", roleAll, "with --object-store: all (ingest and query), ingest, or query (no data of its own: reads the store and asks --ingest-nodes for what they have not published)")
	fs.StringVar(&f.nodeID, "node-id", "", "with --object-store: this node's id, naming its segments in the store (1-128 of a-z A-Z 0-9 - _; default the one kept in the data directory, made on first start)")
	fs.StringVar(&f.ingestNodes, "ingest-nodes", "", "with --role query: comma-separated base URLs of the ingest nodes, e.g. http://ingest1:4000,http://ingest2:4000")
	fs.StringVar(&f.clusterKey, "cluster-key", "", "with --object-store: a secret every node of the cluster shares; ingest nodes answer query nodes that present it with their events not yet in the store (prefer $SEDIMENT_CLUSTER_KEY to the command line)")
	fs.DurationVar(&f.manifestMaxAge, "manifest-max-age", time.Second, "with --role query: how long a source's manifest read from the store serves queries before it is revalidated (a conditional GET); 0: every query revalidates it. Answers stay complete: the ingest nodes send what it does not list")
	fs.DurationVar(&f.unsealedMaxAge, "unsealed-max-age", 0, "with --role query: how long an ingest node's answer (its events not yet in the store) serves later queries of the same source, shared by the queries asking meanwhile; events then show up to this late. 0: every query asks (default)")
	fs.DurationVar(&f.gcInterval, "gc-interval", 0, "with --object-store: how often segment objects no manifest lists are deleted, an hour after they were delisted (default 10m)")
	return func() error { return f.parse(getenv, cfg) }
}

func (f *objectStoreFlags) parse(getenv func(string) string, cfg *objectStoreConfig) error {
	switch f.role {
	case roleAll, roleIngest, roleQuery:
	default:
		return fmt.Errorf("--role: want all, ingest or query, got %q", f.role)
	}
	if f.url == "" {
		for name, v := range map[string]string{"--object-store-endpoint": f.endpoint, "--object-store-region": f.region,
			"--object-store-access-key": f.accessKey, "--object-store-secret-key": f.secretKey, "--cache-size": f.cacheSize,
			"--cache-dir": f.cacheDir, "--node-id": f.nodeID, "--ingest-nodes": f.ingestNodes, "--cluster-key": f.clusterKey} {
			if v != "" {
				return fmt.Errorf("%s needs --object-store", name)
			}
		}
		if f.role != roleAll {
			return fmt.Errorf("--role %s needs --object-store: without one, a server is a single node (role all)", f.role)
		}
		return nil
	}
	s3, err := objstore.ParseS3URL(f.url)
	if err != nil {
		return fmt.Errorf("--object-store: %w", err)
	}
	if f.endpoint != "" {
		if err := s3.SetEndpointURL(f.endpoint); err != nil {
			return fmt.Errorf("--object-store-endpoint: %w", err)
		}
	}
	s3.Region, s3.PathStyle = f.region, f.pathStyle
	s3.AccessKey, s3.SecretKey = f.accessKey, f.secretKey
	if (s3.AccessKey == "") != (s3.SecretKey == "") {
		return errors.New("--object-store-access-key and --object-store-secret-key go together")
	}
	if s3, err = s3.FromEnv(getenv); err != nil {
		return err
	}
	cfg.S3, cfg.Role, cfg.CacheDir, cfg.NodeID, cfg.GCInterval, cfg.ClusterKey = s3, f.role, f.cacheDir, f.nodeID, f.gcInterval, f.clusterKey
	cfg.CacheSize = defaultCacheSize
	if f.cacheSize != "" {
		if cfg.CacheSize, err = parseBytes(f.cacheSize); err != nil || cfg.CacheSize < 1<<20 {
			return fmt.Errorf("--cache-size: want a size of at least 1MiB, e.g. 20GiB, got %q", f.cacheSize)
		}
	}
	if cfg.NodeID != "" && !objstore.ValidID(cfg.NodeID) {
		return fmt.Errorf("--node-id: %q is not a node id (1-128 of a-z A-Z 0-9 - _)", cfg.NodeID)
	}
	if cfg.GCInterval < 0 {
		return errors.New("--gc-interval must not be negative")
	}
	// Ten minutes is far below garbage collection's grace period (an
	// hour), which a stale manifest's segments must not outlive
	// (docs/scale.md).
	if f.manifestMaxAge < 0 || f.manifestMaxAge > 10*time.Minute {
		return fmt.Errorf("--manifest-max-age: want 0 to 10m, got %s", f.manifestMaxAge)
	}
	cfg.ManifestMaxAge = f.manifestMaxAge
	if f.unsealedMaxAge < 0 || f.unsealedMaxAge > 10*time.Minute {
		return fmt.Errorf("--unsealed-max-age: want 0 to 10m, got %s", f.unsealedMaxAge)
	}
	cfg.UnsealedMaxAge = f.unsealedMaxAge
	if cfg.GCInterval == 0 {
		cfg.GCInterval = defaultGCInterval
	}
	for _, u := range strings.Split(f.ingestNodes, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.RawQuery != "" {
			return fmt.Errorf("--ingest-nodes: %q is not a base URL such as http://ingest1:4000", u)
		}
		cfg.IngestNodes = append(cfg.IngestNodes, strings.TrimSuffix(u, "/"))
	}
	if len(cfg.IngestNodes) > 0 && cfg.Role != roleQuery {
		return fmt.Errorf("--ingest-nodes is for --role query (this node's role is %s)", cfg.Role)
	}
	if len(cfg.IngestNodes) > 0 && cfg.ClusterKey == "" {
		return errors.New("--ingest-nodes needs --cluster-key (the ingest nodes' too): the key query nodes present to them")
	}
	return nil
}
