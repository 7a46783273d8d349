package main

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// wantJSON reports whether --json is set for cmd (the global flag, or the
// command's own of the same meaning).
func wantJSON(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("json")
	return v
}

// writeJSON writes v indented, with a final newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// jsonRequested reports whether a command line asks for JSON output (run
// needs to know before cobra parses it, to format parse errors too).
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--json" || a == "--json=true" || a == "--json=1":
			return true
		}
	}
	return false
}

// jsonError is how an error is written on standard error under --json.
type jsonError struct {
	Error string `json:"error"`
	Exit  int    `json:"exit"`
	Usage bool   `json:"usage,omitempty"`
}

// writeJSONError writes err as a JSON object on w.
func writeJSONError(w io.Writer, err error, code int) {
	_ = printJSON(w, jsonError{Error: strings.TrimSpace(err.Error()), Exit: code, Usage: code == exitUsage})
}
