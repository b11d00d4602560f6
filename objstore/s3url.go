package objstore

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// S3Config says where an S3 store is and how to reach it. ParseS3URL and
// S3Config.FromEnv fill it from an `s3://bucket/prefix` URL and the usual
// AWS environment variables; flags override both.
type S3Config struct {
	// Bucket and Prefix: objects live at Prefix + key in Bucket. Prefix is
	// empty or ends with '/'.
	Bucket, Prefix string
	// Endpoint is host[:port] (default s3.amazonaws.com).
	Endpoint string
	// Insecure talks plain HTTP instead of HTTPS (a loopback MinIO).
	Insecure bool
	// Region (default: what the endpoint implies, us-east-1 for MinIO).
	Region string
	// PathStyle addresses buckets as endpoint/bucket rather than
	// bucket.endpoint (MinIO and most self-hosted stores need it).
	PathStyle bool
	// AccessKey, SecretKey and SessionToken are the credentials. When
	// AccessKey is empty they come from the environment
	// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or the
	// shared credentials file (~/.aws/credentials, AWS_PROFILE).
	AccessKey, SecretKey, SessionToken string
	// MaxRetries is how many times the client tries one request before
	// the call fails with ErrUnavailable (default 3; 1: no retry).
	MaxRetries int
}

// ParseS3URL parses "s3://bucket/prefix" (the prefix may be empty or
// nested: "s3://logs/sediment/prod").
func ParseS3URL(raw string) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return S3Config{}, fmt.Errorf("object store URL %q: %w", raw, err)
	}
	if u.Scheme != "s3" {
		return S3Config{}, fmt.Errorf("object store URL %q: want s3://bucket/prefix", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return S3Config{}, fmt.Errorf("object store URL %q: credentials and options go in flags or the environment, not the URL", raw)
	}
	if !validBucket(u.Host) {
		return S3Config{}, fmt.Errorf("object store URL %q: %q is not a bucket name (3-63 of a-z, 0-9, '.', '-')", raw, u.Host)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		for _, part := range strings.Split(prefix, "/") {
			if part == "" || part == "." || part == ".." {
				return S3Config{}, fmt.Errorf("object store URL %q: bad prefix %q", raw, prefix)
			}
		}
		prefix += "/"
	}
	return S3Config{Bucket: u.Host, Prefix: prefix}, nil
}

// validBucket checks S3's bucket naming rules that matter for URLs.
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return b[0] != '.' && b[0] != '-' && b[len(b)-1] != '.' && b[len(b)-1] != '-'
}

// FromEnv fills the fields left empty from the AWS environment:
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (a URL: "http://127.0.0.1:9000"
// also sets Insecure), AWS_REGION or AWS_DEFAULT_REGION, and
// AWS_S3_FORCE_PATH_STYLE=true. getenv nil means os.Getenv.
func (c S3Config) FromEnv(getenv func(string) string) (S3Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if c.Endpoint == "" {
		ep := getenv("AWS_ENDPOINT_URL_S3")
		if ep == "" {
			ep = getenv("AWS_ENDPOINT_URL")
		}
		if ep != "" {
			if err := c.SetEndpointURL(ep); err != nil {
				return c, err
			}
		}
	}
	if c.Region == "" {
		c.Region = getenv("AWS_REGION")
		if c.Region == "" {
			c.Region = getenv("AWS_DEFAULT_REGION")
		}
	}
	if v := getenv("AWS_S3_FORCE_PATH_STYLE"); v == "true" || v == "1" {
		c.PathStyle = true
	}
	return c, nil
}

// SetEndpointURL sets Endpoint and Insecure from "http://host:port" or
// "https://host"; a bare "host:port" keeps HTTPS.
func (c *S3Config) SetEndpointURL(ep string) error {
	if !strings.Contains(ep, "://") {
		c.Endpoint = ep
		return nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("object store endpoint %q: want http(s)://host[:port]", ep)
	}
	switch u.Scheme {
	case "http":
		c.Insecure = true
	case "https":
		c.Insecure = false
	default:
		return fmt.Errorf("object store endpoint %q: scheme must be http or https", ep)
	}
	c.Endpoint = u.Host
	return nil
}

// String is the store's URL, "s3://bucket/prefix", without credentials.
func (c S3Config) String() string {
	return "s3://" + c.Bucket + "/" + strings.TrimSuffix(c.Prefix, "/")
}
