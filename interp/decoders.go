package interp

import "sync"

// ItemDecoder reads the items of an object whose format the interpreter
// does not parse itself (Parquet): one JSON value per item.
type ItemDecoder func(data []byte) ([]any, error)

var (
	decodersMu sync.RWMutex
	decoders   = map[string]ItemDecoder{}
)

// RegisterItemDecoder makes an ItemReader of the given InputType read its
// objects with d. The package that decodes Parquet (internal/parquetrows)
// registers itself, so that the interpreter links no file-format library;
// the engine imports it.
func RegisterItemDecoder(inputType string, d ItemDecoder) {
	decodersMu.Lock()
	defer decodersMu.Unlock()
	decoders[inputType] = d
}

func itemDecoder(inputType string) ItemDecoder {
	decodersMu.RLock()
	defer decodersMu.RUnlock()
	return decoders[inputType]
}
