//go:build !recfs_lean

package decoders

import (
	"github.com/recfs/recfs/codec/pbdecode"
	"github.com/recfs/recfs/codec/pbdecode/pbschema"
)

// The default build renders protobuf with a schema (--decode
// protobuf:MESSAGE --proto FILE); the lean link (tag recfs_lean) leaves
// pbschema and the protocompile/protodesc it links out.
func init() { pbdecode.UseSchemas(loadSchema) }

// loadSchema is pbdecode's Loader: pbschema.Load.
func loadSchema(protos, importPaths []string, open pbdecode.Open) (pbdecode.Schemas, error) {
	s, err := pbschema.Load(protos, importPaths, pbschema.Open(open))
	if err != nil {
		return nil, err
	}
	return s, nil
}
