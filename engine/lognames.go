package engine

import (
	"context"
	"log/slog"
)

// The engine knows a source only by its shard id (the source's token); an
// operator reading the log knows it by name. With Options.SourceName set,
// every log record that names a shard ("shard" attribute) also names the
// source ("source" attribute), looked up when the record is written, so a
// renamed source is logged under its new name.

// sourceNameHandler adds the "source" attribute to records that carry a
// "shard" attribute.
type sourceNameHandler struct {
	inner slog.Handler
	name  func(shardID string) string
}

func withSourceNames(l *slog.Logger, name func(string) string) *slog.Logger {
	if name == nil {
		return l
	}
	return slog.New(&sourceNameHandler{inner: l.Handler(), name: name})
}

func (h *sourceNameHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *sourceNameHandler) Handle(ctx context.Context, r slog.Record) error {
	var shard string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "shard" && a.Value.Kind() == slog.KindString {
			shard = a.Value.String()
			return false
		}
		return true
	})
	if shard != "" {
		if n := h.name(shard); n != "" {
			r = r.Clone()
			r.AddAttrs(slog.String("source", n))
		}
	}
	return h.inner.Handle(ctx, r)
}

func (h *sourceNameHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &sourceNameHandler{inner: h.inner.WithAttrs(as), name: h.name}
}

func (h *sourceNameHandler) WithGroup(g string) slog.Handler {
	return &sourceNameHandler{inner: h.inner.WithGroup(g), name: h.name}
}
