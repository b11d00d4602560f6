package objstore

import (
	"strings"
	"testing"
)

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct {
		in             string
		bucket, prefix string
		bad            bool
	}{
		{in: "s3://logs", bucket: "logs"},
		{in: "s3://logs/", bucket: "logs"},
		{in: "s3://logs/sediment/prod", bucket: "logs", prefix: "sediment/prod/"},
		{in: "s3://logs/sediment/prod/", bucket: "logs", prefix: "sediment/prod/"},
		{in: "s3://my.bucket-1/x", bucket: "my.bucket-1", prefix: "x/"},
		{in: "http://logs/x", bad: true},
		{in: "s3://Logs/x", bad: true},
		{in: "s3://lo/x", bad: true},
		{in: "s3://logs/a//b", bad: true},
		{in: "s3://logs/a/../b", bad: true},
		{in: "s3://key:secret@logs/x", bad: true},
		{in: "s3://logs/x?region=eu", bad: true},
		{in: "logs/x", bad: true},
	} {
		cfg, err := ParseS3URL(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted as %+v", tc.in, cfg)
			}
			continue
		}
		if err != nil || cfg.Bucket != tc.bucket || cfg.Prefix != tc.prefix {
			t.Errorf("%q: %+v, %v; want bucket %q prefix %q", tc.in, cfg, err, tc.bucket, tc.prefix)
		}
	}
}

func TestS3ConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":        "http://127.0.0.1:9000",
		"AWS_DEFAULT_REGION":      "eu-west-1",
		"AWS_S3_FORCE_PATH_STYLE": "true",
	}
	cfg, err := S3Config{Bucket: "b"}.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint != "127.0.0.1:9000" || !cfg.Insecure || cfg.Region != "eu-west-1" || !cfg.PathStyle {
		t.Fatalf("%+v", cfg)
	}
	env["AWS_ENDPOINT_URL_S3"] = "https://s3.example.test"
	env["AWS_REGION"] = "us-east-2"
	cfg, _ = S3Config{Bucket: "b"}.FromEnv(func(k string) string { return env[k] })
	if cfg.Endpoint != "s3.example.test" || cfg.Insecure || cfg.Region != "us-east-2" {
		t.Fatalf("the S3-specific endpoint and AWS_REGION come first: %+v", cfg)
	}
	// Flags (fields set) win over the environment.
	cfg, _ = S3Config{Bucket: "b", Endpoint: "minio:9000", Region: "r"}.FromEnv(func(k string) string { return env[k] })
	if cfg.Endpoint != "minio:9000" || cfg.Region != "r" {
		t.Fatalf("%+v", cfg)
	}
	if _, err := (S3Config{}).FromEnv(func(k string) string {
		if k == "AWS_ENDPOINT_URL" {
			return "ftp://x"
		}
		return ""
	}); err == nil {
		t.Fatal("ftp endpoint accepted")
	}
}

// FuzzParseS3URL: any string parses to a config that prints back to a URL
// parsing to the same config, or fails; never panics.
func FuzzParseS3URL(f *testing.F) {
	for _, s := range []string{"s3://logs", "s3://logs/a/b/", "s3://a.b-c/x", "s3://logs/a//b", "s3://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseS3URL(s)
		if err != nil {
			return
		}
		if !validBucket(cfg.Bucket) || (cfg.Prefix != "" && !strings.HasSuffix(cfg.Prefix, "/")) {
			t.Fatalf("%q parsed to %+v", s, cfg)
		}
		again, err := ParseS3URL(cfg.String())
		if err != nil || again.Bucket != cfg.Bucket || again.Prefix != cfg.Prefix {
			t.Fatalf("%q: %+v prints as %q, which parses to %+v, %v", s, cfg, cfg.String(), again, err)
		}
	})
}

// FuzzParseSegmentName: a name parses only if SegmentName makes it back.
func FuzzParseSegmentName(f *testing.F) {
	f.Add("n1/0000000000000001.seg")
	f.Add("n1/000000000000000g.seg")
	f.Add("a/b/0000000000000001.seg")
	f.Fuzz(func(t *testing.T, name string) {
		node, seq, ok := ParseSegmentName(name)
		if ok && SegmentName(node, seq) != name {
			t.Fatalf("%q parsed to %q %d, which names %q", name, node, seq, SegmentName(node, seq))
		}
	})
}
