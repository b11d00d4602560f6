package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/google/uuid"
)

// The catalog file, format 2: a JSON envelope around the catalog, with a
// checksum of the catalog's bytes as they are in the file.
//
//	{
//	  "format": 2,
//	  "checksum": "crc32c:1a2b3c4d",
//	  "catalog": {            <- payload: from this '{' to its matching '}'
//	    "next_source_id": 3,
//	    ...
//	  }
//	}
//
// The envelope has exactly these three members, in this order, spelled so
// (the reader compares the key names and the checksum text byte for byte:
// a flipped bit in them is damage, not a variant spelling). "checksum" is
// "crc32c:" and the CRC-32C (Castagnoli) of the payload bytes in eight
// lower-case hex digits. Whitespace between the envelope's tokens is JSON's;
// the writer writes the layout above with a final newline.
//
// Format 1 (no envelope, no checksum: the payload's members and "format": 1
// at the top level) is still read; Open rewrites it as format 2.
const (
	checksumPrefix = "crc32c:"
	envelopeFormat = "format"
	envelopeSum    = "checksum"
	envelopeBody   = "catalog"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// payload is the catalog proper: explicit JSON names.
type payload struct {
	NextSourceID   int64          `json:"next_source_id"`
	NextEndpointID int64          `json:"next_endpoint_id"`
	NextTokenID    int64          `json:"next_token_id"`
	Sources        []*Source      `json:"sources"`
	Endpoints      []*Endpoint    `json:"endpoints"`
	AccessTokens   []*AccessToken `json:"access_tokens"`
	// ChangeIDs are the ids of the latest changes made through a shared
	// catalog, oldest first (at most maxChangeIDs), so that a change
	// retried after a lost answer is not applied twice. Missing in
	// catalogs that never were shared.
	ChangeIDs []string `json:"change_ids,omitempty"`
}

// fileV1 is a format 1 file: the payload with the version beside it.
type fileV1 struct {
	Format int `json:"format"`
	payload
}

func (st *state) payload() payload {
	return payload{NextSourceID: st.nextSourceID, NextEndpointID: st.nextEndpointID, NextTokenID: st.nextTokenID,
		Sources: st.sources, Endpoints: st.endpoints, AccessTokens: st.tokens, ChangeIDs: st.changeIDs}
}

// encodeFile returns the catalog file (format FormatLatest) for st.
func encodeFile(st *state) ([]byte, error) {
	body, err := json.MarshalIndent(st.payload(), "  ", "  ")
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+80)
	out = fmt.Appendf(out, "{\n  %q: %d,\n  %q: %q,\n  %q: ", envelopeFormat, FormatLatest, envelopeSum, checksumText(body), envelopeBody)
	out = append(out, body...)
	return append(out, "\n}\n"...), nil
}

func checksumText(body []byte) string {
	return fmt.Sprintf("%s%08x", checksumPrefix, crc32.Checksum(body, castagnoli))
}

// decodeFile reads a catalog file of any supported format and returns its
// state and format. Every error wraps ErrCorrupt.
func decodeFile(data []byte) (*state, int, error) {
	format, err := fileFormat(data)
	if err != nil {
		return nil, 0, err
	}
	switch format {
	case "2":
		body, err := openEnvelope(data)
		if err != nil {
			return nil, 0, err
		}
		var p payload
		if err := json.Unmarshal(body, &p); err != nil {
			return nil, 0, fmt.Errorf("%w: %s", ErrCorrupt, jsonError(err))
		}
		st, err := stateFrom(p)
		return st, FormatV2, err
	case "1":
		// No checksum to check. Strict about the members, so that a damaged
		// format 2 file cannot pass for an empty format 1 catalog.
		var f fileV1
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, 0, fmt.Errorf("%w: format 1: %s", ErrCorrupt, jsonError(err))
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, 0, fmt.Errorf("%w: format 1: data after the catalog", ErrCorrupt)
		}
		st, err := stateFrom(f.payload)
		return st, FormatV1, err
	case "":
		return nil, 0, fmt.Errorf("%w: no format version", ErrCorrupt)
	}
	return nil, 0, fmt.Errorf("%w: format version %s (this build reads %d..%d)", ErrCorrupt, format, FormatMinSupported, FormatLatest)
}

// fileFormat returns the text of a catalog file's format version: the
// value of its first member when that is "format" (as both formats write
// it), else of its "format" member wherever it is.
func fileFormat(data []byte) (json.Number, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", fmt.Errorf("%w: not a JSON object (%s)", ErrCorrupt, jsonError(err))
	}
	if t, err := dec.Token(); err == nil && t == envelopeFormat {
		v, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("%w: format: %s", ErrCorrupt, jsonError(err))
		}
		n, _ := v.(json.Number)
		return n, nil
	}
	var peek struct {
		Format json.Number `json:"format"`
	}
	if err := json.Unmarshal(data, &peek); err != nil {
		return "", fmt.Errorf("%w: %s", ErrCorrupt, jsonError(err))
	}
	return peek.Format, nil
}

// openEnvelope checks a format 2 file's envelope and checksum and returns
// the payload's bytes.
func openEnvelope(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tokErr error
	bad := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if tokErr != nil {
			msg += " (" + jsonError(tokErr) + ")"
		}
		return fmt.Errorf("%w: envelope: %s", ErrCorrupt, msg)
	}
	tok := func() json.Token {
		t, err := dec.Token()
		if err != nil {
			tokErr = err
			return nil
		}
		return t
	}
	if t := tok(); t != json.Delim('{') {
		return nil, bad("not an object")
	}
	if t := tok(); t != envelopeFormat {
		return nil, bad("first member %v, want %q", t, envelopeFormat)
	}
	if t := tok(); t != json.Number("2") {
		return nil, bad("format %v", t)
	}
	if t := tok(); t != envelopeSum {
		return nil, bad("second member %v, want %q", t, envelopeSum)
	}
	sum, _ := tok().(string)
	if t := tok(); t != envelopeBody {
		return nil, bad("third member %v, want %q", t, envelopeBody)
	}
	var body json.RawMessage
	if err := dec.Decode(&body); err != nil {
		return nil, bad("%q: %s", envelopeBody, jsonError(err))
	}
	if len(body) == 0 || body[0] != '{' {
		return nil, bad("%q is not an object", envelopeBody)
	}
	if t := tok(); t != json.Delim('}') {
		return nil, bad("a member after %q", envelopeBody)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("data after the envelope (%s)", jsonError(err))
	}
	if want := checksumText(body); sum != want {
		return nil, fmt.Errorf("%w: checksum mismatch: the file says %q, its catalog's bytes give %q: the file was damaged or edited", ErrCorrupt, sum, want)
	}
	return body, nil
}

// stateFrom checks a decoded payload and returns its state (not indexed).
func stateFrom(f payload) (*state, error) {
	st := &state{
		nextSourceID: f.NextSourceID, nextEndpointID: f.NextEndpointID, nextTokenID: f.NextTokenID,
		sources: f.Sources, endpoints: f.Endpoints, tokens: f.AccessTokens,
	}
	if len(f.ChangeIDs) > maxChangeIDs {
		return nil, fmt.Errorf("%w: %d change ids, at most %d are kept", ErrCorrupt, len(f.ChangeIDs), maxChangeIDs)
	}
	st.changeIDs = f.ChangeIDs
	seenTok := map[string]bool{}
	seenID := map[string]bool{}
	checkID := func(kind string, id, next int64, token string) error {
		key := fmt.Sprintf("%s/%d", kind, id)
		if id <= 0 || id >= next || seenID[key] {
			return fmt.Errorf("%w: %s id %d duplicated or out of range (next %d)", ErrCorrupt, kind, id, next)
		}
		seenID[key] = true
		if kind == "access token" {
			return nil // identified by id; the secret is stored hashed
		}
		if _, err := uuid.Parse(token); err != nil || seenTok[token] {
			return fmt.Errorf("%w: %s %d: bad or duplicated token", ErrCorrupt, kind, id)
		}
		seenTok[token] = true
		return nil
	}
	for _, s := range st.sources {
		if s == nil {
			return nil, fmt.Errorf("%w: null source", ErrCorrupt)
		}
		if err := checkID("source", s.ID, st.nextSourceID, s.Token); err != nil {
			return nil, err
		}
	}
	names := map[string]bool{}
	for _, e := range st.endpoints {
		if e == nil {
			return nil, fmt.Errorf("%w: null endpoint", ErrCorrupt)
		}
		if err := checkID("endpoint", e.ID, st.nextEndpointID, e.Token); err != nil {
			return nil, err
		}
		if names[e.Name] {
			return nil, fmt.Errorf("%w: endpoint name %q duplicated", ErrCorrupt, e.Name)
		}
		names[e.Name] = true
	}
	for _, t := range st.tokens {
		if t == nil {
			return nil, fmt.Errorf("%w: null access token", ErrCorrupt)
		}
		if err := checkID("access token", t.ID, st.nextTokenID, ""); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// jsonError describes a JSON error with the byte offset where the JSON
// stopped making sense, when it is a syntax error.
func jsonError(err error) string {
	if err == nil {
		return "unexpected content"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", err, se.Offset)
	}
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return "the file ends too early"
	}
	return err.Error()
}
