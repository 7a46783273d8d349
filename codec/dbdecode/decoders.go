package dbdecode

import (
	"bytes"
	"errors"

	"github.com/recfs/recfs/codec/decode"
)

// NewBatch returns the decoder of WriteBatch records (--decode batch).
func NewBatch(o Options) decode.Decoder {
	return decode.Func(func(w *decode.Writer, rec *decode.Record) error {
		text, err := AppendBatch(nil, rec.Payload, o)
		return writeLines(w, text, err)
	})
}

// NewManifest returns the decoder of VersionEdit records
// (--decode manifest).
func NewManifest() decode.Decoder {
	return decode.Func(func(w *decode.Writer, rec *decode.Record) error {
		text, err := AppendVersionEdit(nil, rec.Payload)
		return writeLines(w, text, err)
	})
}

// writeLines writes text line by line and turns a *DecodeError into a
// misfit.
func writeLines(w *decode.Writer, text []byte, err error) error {
	for len(text) > 0 {
		line, rest, _ := bytes.Cut(text, []byte("\n"))
		w.Begin()
		if w.JSON() {
			w.Key("text")
			w.B = decode.AppendJSONBytes(w.B, line)
		} else {
			w.B = append(w.B, line...)
		}
		w.End()
		text = rest
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return decode.Misfit(de.At, "%s", de.Reason)
	}
	return err
}

// PrepareBatch returns the registry's constructor of batch decoders of
// dialect d.
func PrepareBatch(d Dialect) func(*decode.Params) (decode.Factory, error) {
	return func(*decode.Params) (decode.Factory, error) {
		return decode.Static(NewBatch(Options{Dialect: d})), nil
	}
}

// PrepareManifest is the registry's constructor of manifest decoders.
func PrepareManifest(*decode.Params) (decode.Factory, error) {
	return decode.Static(NewManifest()), nil
}

// DetectBatch reports whether recs, the first records of a source, are
// WriteBatches: each decodes without error and one holds an operation.
func DetectBatch(recs [][]byte) bool {
	ops := false
	for _, r := range recs {
		if _, err := AppendBatch(nil, r, Options{}); err != nil {
			return false
		}
		ops = ops || len(r) > BatchHeaderLen
	}
	return ops
}

// DetectManifest reports whether recs, the first records of a source,
// are VersionEdits: each decodes without error and one is not empty.
func DetectManifest(recs [][]byte) bool {
	fields := false
	for _, r := range recs {
		if _, err := AppendVersionEdit(nil, r); err != nil {
			return false
		}
		fields = fields || len(r) > 0
	}
	return fields
}
