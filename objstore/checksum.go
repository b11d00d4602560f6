package objstore

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// castagnoli is the CRC-32C table, built once.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is an object's content checksum: CRC-32C (what S3 computes and
// verifies on upload) and SHA-256 (stored with the object as metadata by
// Put, for whoever wants a cryptographic digest). HasCRC and HasSHA say
// which are known.
type Checksum struct {
	CRC32C uint32
	SHA256 [32]byte
	HasCRC bool
	HasSHA bool
}

// String renders the known sums, "crc32c:1a2b3c4d sha256:…".
func (c Checksum) String() string {
	s := ""
	if c.HasCRC {
		s = fmt.Sprintf("crc32c:%08x", c.CRC32C)
	}
	if c.HasSHA {
		if s != "" {
			s += " "
		}
		s += "sha256:" + hex.EncodeToString(c.SHA256[:])
	}
	if s == "" {
		return "none"
	}
	return s
}

// Matches reports whether c and o agree on every sum both know, and know
// at least one in common.
func (c Checksum) Matches(o Checksum) bool {
	common := false
	if c.HasCRC && o.HasCRC {
		if c.CRC32C != o.CRC32C {
			return false
		}
		common = true
	}
	if c.HasSHA && o.HasSHA {
		if c.SHA256 != o.SHA256 {
			return false
		}
		common = true
	}
	return common
}

// SumBytes returns the checksum of b.
func SumBytes(b []byte) Checksum {
	return Checksum{CRC32C: crc32.Checksum(b, castagnoli), SHA256: sha256.Sum256(b), HasCRC: true, HasSHA: true}
}

// SumReaderAt returns the checksum of the first size bytes of r, reading
// it in 1 MiB pieces. A short read is an error.
func SumReaderAt(r io.ReaderAt, size int64) (Checksum, error) {
	h := sha256.New()
	var crc uint32
	buf := make([]byte, min(size, 1<<20))
	for off := int64(0); off < size; {
		n := int(min(int64(len(buf)), size-off))
		m, err := r.ReadAt(buf[:n], off)
		if m < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return Checksum{}, fmt.Errorf("read at %d: %w", off, err)
		}
		crc = crc32.Update(crc, castagnoli, buf[:n])
		h.Write(buf[:n])
		off += int64(n)
	}
	c := Checksum{CRC32C: crc, HasCRC: true, HasSHA: true}
	h.Sum(c.SHA256[:0])
	return c, nil
}

// parseCRCBase64 decodes an S3 x-amz-checksum-crc32c value; ok false when
// it is missing or not a plain 4-byte CRC (a multipart upload's composite
// checksum, "…-N", is not the object's CRC).
func parseCRCBase64(s string) (uint32, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(b), true
}

// parseSHAHex decodes a SHA-256 in hex.
func parseSHAHex(s string) ([32]byte, bool) {
	var out [32]byte
	if len(s) != 64 {
		return out, false
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return out, false
	}
	return out, true
}
