package decode

import "io"

// Params are what the command line gives a decoder (--decode NAME:ARG
// and the flags beside it), with the means to read the files it names.
// A registry entry's Prepare turns them into a [Factory] once per
// command or mount.
type Params struct {
	// Arg is what follows the colon of --decode NAME:ARG ("" if none).
	Arg string
	// Proto and ProtoPath are --proto (.proto sources or descriptor
	// sets) and --proto-path (import directories).
	Proto, ProtoPath []string
	// Manifest is --manifest: a MANIFEST naming a WAL's column families.
	Manifest string
	// Open reads a file named on the command line (nil: none can be).
	Open func(path string) (io.ReadCloser, error)
	// OpenRecords opens a record file named on the command line.
	OpenRecords func(path string) (RecordsCloser, error)
}

// Factory makes the decoder of one source.
type Factory func(env Env) (Decoder, error)

// Static is the Factory of a decoder that does not depend on its source.
func Static(d Decoder) Factory {
	return func(Env) (Decoder, error) { return d, nil }
}
