package httpapi

import "github.com/sediment/sediment/catalog"

// Wherever a route takes a source's token in the path
// (/api/sources/:token, /schema, /recent, /search, /tail, /event), it
// takes the source's name too: a UUID is looked up as a token, anything
// else as a name. When names are shared, the source created first is the
// one named (as for ingest by name).

// sourceByTokenOrName returns the source a path segment names, or nil.
func (s *Server) sourceByTokenOrName(tokenOrName string) *catalog.Source {
	if canon, ok := catalog.CanonicalToken(tokenOrName); ok {
		return s.cat.SourceByToken(canon)
	}
	return s.cat.SourceByName(tokenOrName)
}

// sourceToken returns the token of the source a path segment names, or ""
// when there is none.
func (s *Server) sourceToken(tokenOrName string) string {
	if src := s.sourceByTokenOrName(tokenOrName); src != nil {
		return src.Token
	}
	return ""
}
