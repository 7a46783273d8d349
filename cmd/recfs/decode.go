package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
)

// decodeFlags are --decode and the flags that give its decoder
// parameters.
type decodeFlags struct {
	mode      string
	manifest  string
	proto     []string
	protoPath []string
}

// decodeHelp is the --decode flag's usage line.
const decodeHelp = `show records decoded as text (see "Decoders" below): ` + "NAME[:ARG] or auto"

// decodersHelp lists the decoders for a command's long help.
func decodersHelp() string {
	return "Decoders (--decode):\n" + decoders.Help()
}

// addDecodeFlags registers --decode on cmd.
func addDecodeFlags(cmd *cobra.Command) *decodeFlags {
	f := &decodeFlags{}
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "decode", decoders.ModeNone, decodeHelp)
	_ = cmd.RegisterFlagCompletionFunc("decode", fixedCompletion(decoders.Names()...))
	fl.StringVar(&f.manifest, "manifest", "", "with --decode batch: the MANIFEST that names the WAL's column families (default: the one beside the WAL)")
	fl.StringArrayVar(&f.proto, "proto", nil, "with --decode protobuf:MESSAGE: a .proto file or a descriptor set (protoc -o) defining MESSAGE (repeatable)")
	fl.StringArrayVar(&f.protoPath, "proto-path", nil, "with --proto: a directory to find imported .proto files in (repeatable; default: the directory of each --proto)")
	return f
}

// decoding reports whether --decode was given.
func (f *decodeFlags) decoding() bool { return f.mode != decoders.ModeNone }

// check checks the flags without preparing a decoder.
func (f *decodeFlags) check() error {
	if err := decoders.Check(f.mode); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), decoders.ErrUsage.Error()+": "))
	}
	return nil
}

// plan prepares the decoder the flags ask for; nil without --decode.
func (f *decodeFlags) plan(out decode.Output) (*decoders.Plan, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	p, err := decoders.Prepare(decoders.Spec{Mode: f.mode, Output: out, Params: open.DecodeParams(f.manifest, f.proto, f.protoPath)})
	if errors.Is(err, decoders.ErrUsage) {
		return nil, usagef("%s", err)
	}
	return p, err
}

// session opens the decoder the flags ask for over t, the file at path,
// writing as out says; nil, and why, when auto leaves the records raw.
func (f *decodeFlags) session(out decode.Output, t *index.Table, path string) (*decode.Session, string, error) {
	plan, err := f.plan(out)
	if err != nil {
		return nil, "", err
	}
	return plan.Open(t, open.DecodeEnv(path, t.Info().Format))
}
