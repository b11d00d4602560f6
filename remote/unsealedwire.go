package remote

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/sediment/sediment/objstore"
	"github.com/sediment/sediment/segment"
)

// An ingest node's answer to a query node's "what do you hold that this
// manifest does not list?" (docs/scale.md, "The read path of a query
// node") travels as one binary stream, version 1:
//
//	+--------+---------+-----------+------------------------+----------------------+-----+
//	| "SDUS" | u8 = 1  | node      | skip_count uvarint,    | parts, each:         | u8  |
//	|        | version | string    | then that many names   |   u8 = 1, name       | = 0 |
//	|        |         |           | (string)               |   string, size       | end |
//	|        |         |           |                        |   uvarint, bytes,    |     |
//	|        |         |           |                        |   crc32c u32 LE      |     |
//	+--------+---------+-----------+------------------------+----------------------+-----+
//
// string is a uvarint length then the bytes. node is the ingest node's
// id; skip names the segments (SegmentName) the manifest lists for that
// node but the node no longer serves (replaced by a compaction it has not
// published yet, or dropped by retention): the query node leaves them
// out, since the parts carry their events. Each part is a segment file
// (segment.md): a sealed segment the manifest does not list, or a range
// of the rows of one of the node's heads (engine.HeadPart). The CRC-32C
// (Castagnoli) covers the part's bytes; the end marker tells a complete
// answer from a cut one.
//
// Two more entries carry head parts the asker may hold on to (a part of
// that name always holds the same rows while the node lists it):
//
//	u8 = 3, name string, size uvarint, bytes, crc32c   a part to keep
//	u8 = 2, name string                                 a part the asker
//	                                                    said it holds
//	                                                    (UnsealedRequest.Have)
//
// A node sends tags 2 and 3 only to an asker that said it keeps parts
// (UnsealedRequest.KeepsParts), tag 2 only for names in its Have.

const (
	unsealedMagic   = "SDUS"
	unsealedVersion = 1
	partTag         = 1
	heldTag         = 2
	keepTag         = 3
	endTag          = 0
	// maxUnsealedSkip bounds the names skipped, maxUnsealedParts the parts.
	maxUnsealedSkip  = 1 << 20
	maxUnsealedParts = 1 << 16
	maxNameLen       = 256
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrBadUnsealed: an answer that does not decode (cut, damaged, or too
// large for the limit given).
var ErrBadUnsealed = errors.New("remote: bad unsealed-events answer")

// Unsealed is a decoded answer.
type Unsealed struct {
	Node  string
	Skip  []string
	Parts []UnsealedPart
}

// UnsealedPart is one segment file of an answer.
type UnsealedPart struct {
	Name string
	Data []byte
	// Keep says the asker may hold the part for later answers (a head
	// part); Held that the node sent only its name, since the asker said
	// it holds it (Data is then what the asker held, once resolved).
	Keep, Held bool

	r *segment.Reader // opened when it was held or kept (querysource.go)
}

// unsealedWriter writes an answer.
type unsealedWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newUnsealedWriter(w io.Writer, node string, skip []string) (*unsealedWriter, error) {
	uw := &unsealedWriter{w: bufio.NewWriterSize(w, 64<<10)}
	b := append([]byte(unsealedMagic), unsealedVersion)
	b = appendStr(b, node)
	b = binary.AppendUvarint(b, uint64(len(skip)))
	for _, s := range skip {
		b = appendStr(b, s)
	}
	_, err := uw.w.Write(b)
	return uw, err
}

// part writes one part of size bytes read from r.
func (uw *unsealedWriter) part(name string, r io.Reader, size int64) error {
	return uw.partTagged(partTag, name, r, size)
}

// held writes the name of a part the asker holds.
func (uw *unsealedWriter) held(name string) error {
	b := append(uw.buf[:0], heldTag)
	b = appendStr(b, name)
	_, err := uw.w.Write(b)
	return err
}

func (uw *unsealedWriter) partTagged(tag byte, name string, r io.Reader, size int64) error {
	b := append(uw.buf[:0], tag)
	b = appendStr(b, name)
	b = binary.AppendUvarint(b, uint64(size))
	if _, err := uw.w.Write(b); err != nil {
		return err
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(io.MultiWriter(uw.w, h), io.LimitReader(r, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("remote: part %s: %d bytes, want %d", name, n, size)
	}
	uw.buf = binary.LittleEndian.AppendUint32(b[:0], h.Sum32())
	_, err = uw.w.Write(uw.buf)
	return err
}

// end writes the end marker and flushes.
func (uw *unsealedWriter) end() error {
	if err := uw.w.WriteByte(endTag); err != nil {
		return err
	}
	return uw.w.Flush()
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeUnsealed reads an answer from r, holding at most maxBytes of
// parts in memory: a larger answer is an error (never a partial one). It
// checks every part's CRC and that every name is a segment name or a
// head part of the answering node.
func DecodeUnsealed(r io.Reader, maxBytes int64) (*Unsealed, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	d := &unsealedReader{r: br}
	magic := d.bytes(len(unsealedMagic) + 1)
	if d.err != nil {
		return nil, d.err
	}
	if string(magic[:4]) != unsealedMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrBadUnsealed)
	}
	if magic[4] != unsealedVersion {
		return nil, fmt.Errorf("%w: version %d (this node reads %d)", ErrBadUnsealed, magic[4], unsealedVersion)
	}
	out := &Unsealed{Node: d.str(128)}
	if d.err == nil && !objstore.ValidID(out.Node) {
		return nil, fmt.Errorf("%w: bad node id %q", ErrBadUnsealed, out.Node)
	}
	n := d.uvarint()
	if d.err == nil && n > maxUnsealedSkip {
		return nil, fmt.Errorf("%w: %d names to skip", ErrBadUnsealed, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := d.str(maxNameLen)
		if _, _, ok := objstore.ParseSegmentName(name); d.err == nil && !ok {
			return nil, fmt.Errorf("%w: %q is not a segment name", ErrBadUnsealed, name)
		}
		out.Skip = append(out.Skip, name)
	}
	var total int64
	for d.err == nil {
		tag := d.byte()
		if d.err != nil || tag == endTag {
			break
		}
		if tag != partTag && tag != heldTag && tag != keepTag {
			return nil, fmt.Errorf("%w: tag %d", ErrBadUnsealed, tag)
		}
		if len(out.Parts) == maxUnsealedParts {
			return nil, fmt.Errorf("%w: more than %d parts", ErrBadUnsealed, maxUnsealedParts)
		}
		name := d.str(maxNameLen)
		if tag != partTag && d.err == nil && !strings.HasPrefix(name, out.Node+"/head-") {
			return nil, fmt.Errorf("%w: %q is not a head part of node %s", ErrBadUnsealed, name, out.Node)
		}
		if tag == heldTag {
			out.Parts = append(out.Parts, UnsealedPart{Name: name, Held: true})
			continue
		}
		size := d.uvarint()
		if d.err != nil {
			break
		}
		if size > uint64(maxBytes-total) {
			return nil, fmt.Errorf("%w: more than %d bytes of parts", ErrBadUnsealed, maxBytes)
		}
		total += int64(size)
		// Read as the bytes arrive: memory follows what was sent, not
		// what the size claims.
		var buf bytes.Buffer
		if _, err := io.CopyN(&buf, br, int64(size)); err != nil {
			d.fail(err)
			break
		}
		data := buf.Bytes()
		sum := d.bytes(4)
		if d.err == nil && binary.LittleEndian.Uint32(sum) != crc32.Checksum(data, castagnoli) {
			return nil, fmt.Errorf("%w: part %s fails its checksum", ErrBadUnsealed, name)
		}
		out.Parts = append(out.Parts, UnsealedPart{Name: name, Data: data, Keep: tag == keepTag})
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}

// unsealedReader reads the answer's primitives; the first failure sticks.
type unsealedReader struct {
	r   *bufio.Reader
	err error
}

func (d *unsealedReader) fail(err error) {
	if d.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err = fmt.Errorf("%w: %v", ErrBadUnsealed, err)
	}
}

func (d *unsealedReader) byte() byte {
	if d.err != nil {
		return 0
	}
	c, err := d.r.ReadByte()
	if err != nil {
		d.fail(err)
	}
	return c
}

func (d *unsealedReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *unsealedReader) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.fail(err)
		return nil
	}
	return b
}

func (d *unsealedReader) str(max int) string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(max) {
		d.fail(fmt.Errorf("a string of %d bytes (at most %d)", n, max))
		return ""
	}
	return string(d.bytes(int(n)))
}
