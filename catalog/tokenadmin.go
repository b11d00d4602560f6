package catalog

import "slices"

// OriginAPI marks the tokens made through the management API
// (POST /api/access-tokens).
const OriginAPI = "api"

// RevokeAccessToken removes the token with id, as the management API's
// DELETE /api/access-tokens/:token does, but never the last token with
// scope private: without one nobody could use the management API until a
// restart re-seeds the environment's token. The check and the removal are
// one change, so two revocations at once cannot both pass it.
// Errors: ErrNotFound, *ValidationError (the last private token).
func (c *Catalog) RevokeAccessToken(id int64) error {
	return c.change(func(st *state) ([]Change, error) {
		i := indexOf(st.tokens, func(t *AccessToken) bool { return t.ID == id })
		if i < 0 {
			return nil, ErrNotFound
		}
		if st.tokens[i].HasScope(ScopePrivate) {
			others := slices.ContainsFunc(st.tokens, func(t *AccessToken) bool { return t.ID != id && t.HasScope(ScopePrivate) })
			if !others {
				fe := fieldErrors{}
				fe.add("token", "is the last token with scope private: create another one before revoking it")
				return nil, fe.err()
			}
		}
		st.tokens = append(st.tokens[:i:i], st.tokens[i+1:]...)
		return []Change{{Kind: TokensChanged}}, nil
	})
}
