package objstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is a Store on an S3-compatible service, through minio-go.
type S3 struct {
	cfg    S3Config
	client *minio.Client
	core   minio.Core // for Get: its answer keeps the headers (Content-Range)
}

// shaMetaKey is the user metadata (x-amz-meta-sediment-sha256) Put stores
// the object's SHA-256 in, as 64 hex digits.
const shaMetaKey = "Sediment-Sha256"

// maxSinglePut is the largest object one PUT stores (S3's limit). Put
// never uses multipart uploads: a single PUT is atomic, carries its
// conditions (If-None-Match, If-Match) as every S3-compatible store
// implements them, and gets the whole object's CRC32-C verified by the
// server; segments are far smaller.
const maxSinglePut = 5 << 30

// OpenS3 returns the store cfg describes. It does not contact the service:
// Check does.
func OpenS3(cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("objstore: no bucket")
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = "s3.amazonaws.com"
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 3
	}
	var creds *credentials.Credentials
	if cfg.AccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken)
	} else {
		// The environment, then the shared credentials file. Not the EC2
		// metadata service: that is a network call nobody asked for.
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.FileAWSCredentials{},
		})
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        creds,
		Secure:       !cfg.Insecure,
		Region:       cfg.Region,
		BucketLookup: lookup,
		// Lets Put send the CRC32-C as a trailer that the server checks.
		TrailingHeaders: true,
		MaxRetries:      cfg.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("objstore: %s: %w", cfg, err)
	}
	return &S3{cfg: cfg, client: client, core: minio.Core{Client: client}}, nil
}

// String implements Store.
func (s *S3) String() string { return s.cfg.String() }

// Check verifies that the bucket exists and the credentials reach it.
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return s.classify("check", "", err)
	}
	if !ok {
		return opErr("check", "", nil, fmt.Errorf("bucket %q does not exist", s.cfg.Bucket))
	}
	return nil
}

// CreateBucket creates the bucket if it does not exist (for tests and a
// first setup; production buckets are usually made by the operator).
func (s *S3) CreateBucket(ctx context.Context) error {
	err := s.client.MakeBucket(ctx, s.cfg.Bucket, minio.MakeBucketOptions{Region: s.cfg.Region})
	if err != nil {
		if r := minio.ToErrorResponse(err); r.Code == "BucketAlreadyOwnedByYou" || r.Code == "BucketAlreadyExists" {
			return nil
		}
		return s.classify("create bucket", "", err)
	}
	return nil
}

func (s *S3) full(key string) string { return s.cfg.Prefix + key }

// Get implements Store.
func (s *S3) Get(ctx context.Context, key string, opts GetOptions) (io.ReadCloser, ObjectInfo, error) {
	if opts.Offset < 0 || opts.Length < 0 {
		return nil, ObjectInfo{}, opErr("get", key, nil, fmt.Errorf("bad range %d+%d", opts.Offset, opts.Length))
	}
	var o minio.GetObjectOptions
	if opts.IfMatch != "" {
		if err := o.SetMatchETag(opts.IfMatch); err != nil {
			return nil, ObjectInfo{}, opErr("get", key, nil, err)
		}
	}
	if opts.IfNoneMatch != "" {
		if err := o.SetMatchETagExcept(opts.IfNoneMatch); err != nil {
			return nil, ObjectInfo{}, opErr("get", key, nil, err)
		}
	}
	if opts.Offset > 0 || opts.Length > 0 {
		end := int64(0) // SetRange's "to the end"
		if opts.Length > 0 {
			end = opts.Offset + opts.Length - 1
		}
		if err := o.SetRange(opts.Offset, end); err != nil {
			return nil, ObjectInfo{}, opErr("get", key, nil, err)
		}
	}
	body, st, hdr, err := s.core.GetObject(ctx, s.cfg.Bucket, s.full(key), o)
	if err != nil {
		if r := minio.ToErrorResponse(err); r.Code == "InvalidRange" {
			// The range starts at or past the end: nothing to read.
			info, herr := s.Head(ctx, key)
			if herr != nil {
				return nil, ObjectInfo{}, herr
			}
			return io.NopCloser(strings.NewReader("")), info, nil
		}
		return nil, ObjectInfo{}, s.classify("get", key, err)
	}
	info := s.info(key, st)
	if cr := hdr.Get("Content-Range"); cr != "" {
		// "bytes 100-149/16000": the object's size is after the slash
		// (the info's is the range's).
		total, err := strconv.ParseInt(cr[strings.LastIndexByte(cr, '/')+1:], 10, 64)
		if err != nil {
			body.Close()
			return nil, ObjectInfo{}, opErr("get", key, nil, fmt.Errorf("bad Content-Range %q", cr))
		}
		info.Size = total
	}
	return &s3Body{rc: body, s: s, key: key}, info, nil
}

// s3Body classifies the errors of reading a Get's body.
type s3Body struct {
	rc  io.ReadCloser
	s   *S3
	key string
}

func (b *s3Body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		err = b.s.classify("get", b.key, err)
	}
	return n, err
}

func (b *s3Body) Close() error { return b.rc.Close() }

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, body io.ReaderAt, size int64, opts PutOptions) (ObjectInfo, error) {
	if opts.IfNoneMatch && opts.IfMatch != "" {
		return ObjectInfo{}, opErr("put", key, nil, errors.New("IfNoneMatch and IfMatch together"))
	}
	if size < 0 || size > maxSinglePut {
		return ObjectInfo{}, opErr("put", key, nil, fmt.Errorf("size %d outside 0..%d", size, int64(maxSinglePut)))
	}
	sum, err := SumReaderAt(body, size)
	if err != nil {
		return ObjectInfo{}, opErr("put", key, nil, fmt.Errorf("read body: %w", err))
	}
	po := minio.PutObjectOptions{
		UserMetadata:     map[string]string{shaMetaKey: hex.EncodeToString(sum.SHA256[:])},
		Checksum:         minio.ChecksumCRC32C,
		DisableMultipart: true,
		ContentType:      "application/octet-stream",
	}
	if opts.IfNoneMatch {
		po.SetMatchETagExcept("*")
	}
	if opts.IfMatch != "" {
		po.SetMatchETag(opts.IfMatch)
	}
	up, err := s.client.PutObject(ctx, s.cfg.Bucket, s.full(key), io.NewSectionReader(body, 0, size), size, po)
	if err != nil {
		return ObjectInfo{}, s.classify("put", key, err)
	}
	info := ObjectInfo{Key: key, Size: up.Size, ETag: up.ETag, Modified: up.LastModified,
		Sum: Checksum{SHA256: sum.SHA256, HasSHA: true}}
	crc, ok := parseCRCBase64(up.ChecksumCRC32C)
	if !ok {
		// The PUT's answer did not carry the checksum: read it back.
		h, err := s.Head(ctx, key)
		if err != nil {
			return info, err
		}
		if h.ETag != up.ETag {
			// Replaced meanwhile (only possible for an unconditional or
			// If-Match put that another writer followed): what we stored
			// can no longer be read back.
			return info, opErr("put", key, ErrPrecondition, fmt.Errorf("replaced before its checksum could be read back (etag %s, now %s)", up.ETag, h.ETag))
		}
		switch {
		case h.Sum.HasCRC:
			crc = h.Sum.CRC32C
		case h.Size == 0 && size == 0:
			crc = 0 // stores keep no checksum of nothing
		default:
			return info, opErr("put", key, ErrChecksum, errors.New("the store reports no CRC32-C for the object"))
		}
		info.Modified = h.Modified
	}
	info.Sum.CRC32C, info.Sum.HasCRC = crc, true
	if crc != sum.CRC32C || up.Size != size {
		return info, opErr("put", key, ErrChecksum, fmt.Errorf("sent %d bytes crc32c:%08x, stored %d bytes crc32c:%08x", size, sum.CRC32C, up.Size, crc))
	}
	return info, nil
}

// Head implements Store.
func (s *S3) Head(ctx context.Context, key string) (ObjectInfo, error) {
	o := minio.StatObjectOptions{Checksum: true}
	st, err := s.client.StatObject(ctx, s.cfg.Bucket, s.full(key), o)
	if err != nil {
		return ObjectInfo{}, s.classify("head", key, err)
	}
	return s.info(key, st), nil
}

func (s *S3) info(key string, st minio.ObjectInfo) ObjectInfo {
	info := ObjectInfo{Key: key, Size: st.Size, ETag: st.ETag, Modified: st.LastModified}
	info.Sum.CRC32C, info.Sum.HasCRC = parseCRCBase64(st.ChecksumCRC32C)
	for k, v := range st.UserMetadata {
		if strings.EqualFold(k, shaMetaKey) {
			info.Sum.SHA256, info.Sum.HasSHA = parseSHAHex(v)
		}
	}
	if !info.Sum.HasSHA {
		if v := st.Metadata.Get("X-Amz-Meta-" + shaMetaKey); v != "" {
			info.Sum.SHA256, info.Sum.HasSHA = parseSHAHex(v)
		}
	}
	return info
}

// List implements Store.
func (s *S3) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the lister's goroutine if we return early
	var out []ObjectInfo
	for o := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.full(prefix), Recursive: true}) {
		if o.Err != nil {
			return nil, s.classify("list", prefix, o.Err)
		}
		key := strings.TrimPrefix(o.Key, s.cfg.Prefix)
		out = append(out, ObjectInfo{Key: key, Size: o.Size, ETag: o.ETag, Modified: o.LastModified})
	}
	return out, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.full(key), minio.RemoveObjectOptions{}); err != nil {
		return s.classify("delete", key, err)
	}
	return nil
}

// classify wraps a minio-go error as an *OpError of the right kind.
func (s *S3) classify(op, key string, err error) error {
	var r minio.ErrorResponse
	if errors.As(err, &r) && (r.StatusCode != 0 || r.Code != "") {
		switch {
		case r.Code == "NoSuchKey" || (r.StatusCode == 404 && r.Code != "NoSuchBucket"):
			return opErr(op, key, ErrNotExist, err)
		case r.StatusCode == 304:
			// A conditional GET (If-None-Match) of the version the caller has.
			return opErr(op, key, ErrNotModified, err)
		case r.StatusCode == 412 || r.Code == "PreconditionFailed":
			return opErr(op, key, ErrPrecondition, err)
		case r.StatusCode == 409 && r.Code == "ConditionalRequestConflict":
			// Two conditional writes at once: one of them loses.
			return opErr(op, key, ErrPrecondition, err)
		case r.Code == "BadDigest" || r.Code == "XAmzContentChecksumMismatch" || r.Code == "InvalidDigest":
			// The server's checksum of what arrived differs from ours.
			return opErr(op, key, ErrChecksum, err)
		case r.StatusCode >= 500 || r.StatusCode == 429 || r.StatusCode == 408 ||
			r.Code == "SlowDown" || r.Code == "RequestTimeout" || r.Code == "ServiceUnavailable" ||
			r.Code == "InternalError" || r.Code == "XMinioServerNotInitialized":
			return opErr(op, key, ErrUnavailable, err)
		}
		return opErr(op, key, nil, err)
	}
	if errors.Is(err, context.Canceled) {
		return opErr(op, key, nil, err)
	}
	if unreachable(err) {
		return opErr(op, key, ErrUnavailable, err)
	}
	return opErr(op, key, nil, err)
}

// unreachable reports whether err is a transport failure: the request
// may not have reached the store, or its answer did not come back.
func unreachable(err error) bool {
	var ne net.Error
	var ue *url.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) || errors.As(err, &ue) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

var _ Store = (*S3)(nil)
