package httpapi

import (
	"sort"
	"strings"

	"github.com/valyala/fasthttp"
)

// sourceSchema answers GET /api/sources/:token/schema: the fields every
// stored event of the source has contributed, as a JSON Schema object, or
// with ?variant=dot as a flat map from dotted path to type name
// ("string", "integer", "float", "boolean", "datetime", "map",
// "list(<element type>)"; fields of array elements appear under the
// array's path).
func (s *Server) sourceSchema(ctx *fasthttp.RequestCtx, token string) {
	if !s.authorizeManagement(ctx) {
		return
	}
	src := s.lookupSource(ctx, token)
	if src == nil {
		return
	}
	shard, err := s.eng.Shard(src.Token)
	if err != nil {
		s.appendFailed(ctx, src, err)
		return
	}
	sn := shard.Snapshot()
	defer sn.Release()
	var fields []schemaField
	for path, f := range sn.Schema().Fields {
		sf := schemaField{path: path, typ: f.Type.String(), record: f.Record, array: f.Array, elemType: f.ElemType.String()}
		for _, ef := range f.ElemFields {
			sf.elems = append(sf.elems, schemaField{path: ef.Path, typ: ef.Type.String(), record: ef.Record})
		}
		fields = append(fields, sf)
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].path < fields[j].path })
	if string(ctx.QueryArgs().Peek("variant")) == "dot" {
		sendJSON(ctx, fasthttp.StatusOK, dotSchema(fields))
		return
	}
	sendJSON(ctx, fasthttp.StatusOK, map[string]any{
		"$schema":    "http://json-schema.org/draft-07/schema#",
		"type":       "object",
		"properties": jsonSchemaProperties(fields),
	})
}

// schemaField is one field of a source's schema, decoupled from the scan
// package's types: typ and elemType are SQL type names (STRING, INT64,
// FLOAT64, BOOL, TIMESTAMP, NULL when the path never held a scalar).
type schemaField struct {
	path          string
	typ, elemType string
	record, array bool
	elems         []schemaField // fields of record elements, paths relative to the element
}

// dotTypeName names a scalar SQL type in the dotted variant.
func dotTypeName(sqlType string) string {
	switch sqlType {
	case "STRING":
		return "string"
	case "INT64":
		return "integer"
	case "FLOAT64":
		return "float"
	case "BOOL":
		return "boolean"
	case "TIMESTAMP", "DATETIME":
		return "datetime"
	}
	return ""
}

func dotSchema(fields []schemaField) map[string]string {
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		out[f.path] = dotType(f)
		for _, e := range f.elems {
			out[f.path+"."+e.path] = dotType(e)
		}
	}
	return out
}

func dotType(f schemaField) string {
	switch {
	case f.array:
		elem := dotTypeName(f.elemType)
		if elem == "" {
			elem = "map"
		}
		return "list(" + elem + ")"
	case f.record:
		return "map"
	}
	if t := dotTypeName(f.typ); t != "" {
		return t
	}
	return "string"
}

// jsonSchemaType names a scalar SQL type in JSON Schema.
func jsonSchemaType(sqlType string) string {
	switch sqlType {
	case "INT64", "TIMESTAMP":
		return "integer" // timestamps are integer microseconds in events
	case "FLOAT64":
		return "number"
	case "BOOL":
		return "boolean"
	}
	return "string"
}

// jsonSchemaProperties nests dotted fields into JSON Schema properties.
func jsonSchemaProperties(fields []schemaField) map[string]any {
	props := map[string]any{}
	for _, f := range fields {
		parts := strings.Split(f.path, ".")
		parent := props
		for _, p := range parts[:len(parts)-1] {
			parent = objectProperties(parent, p)
		}
		leaf := parts[len(parts)-1]
		switch {
		case f.array:
			items := map[string]any{"type": jsonSchemaType(f.elemType)}
			if len(f.elems) > 0 || dotTypeName(f.elemType) == "" {
				items = map[string]any{"type": "object", "properties": jsonSchemaProperties(f.elems)}
			}
			parent[leaf] = map[string]any{"type": "array", "items": items}
		case f.record:
			objectProperties(parent, leaf)
		default:
			if _, exists := parent[leaf]; !exists {
				parent[leaf] = map[string]any{"type": jsonSchemaType(f.typ)}
			}
		}
	}
	return props
}

// objectProperties returns the properties of the object schema at
// parent[name], making it an object schema if it is not one yet.
func objectProperties(parent map[string]any, name string) map[string]any {
	if node, ok := parent[name].(map[string]any); ok && node["type"] == "object" {
		return node["properties"].(map[string]any)
	}
	props := map[string]any{}
	parent[name] = map[string]any{"type": "object", "properties": props}
	return props
}
