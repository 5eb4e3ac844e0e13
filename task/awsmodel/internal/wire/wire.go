// Package wire is the file format of the embedded AWS API output models:
// what the generator writes and awsmodel reads.
//
// It imports nothing of stepd's and must not: awsmodel and its generator
// build on it.
package wire

// File is the whole model file: services by the name their models have
// in the AWS SDKs' data (lambda, s3, stepfunctions ...).
type File struct {
	Services map[string]*Service `json:"services"`
}

// Service holds one service's operations and the shapes their outputs
// reach. Shape 0 is always Any.
type Service struct {
	// Ops maps an operation name, lower-cased (getfunction), to the index
	// of its output shape.
	Ops    map[string]int `json:"ops"`
	Shapes []Shape        `json:"shapes"`
}

// Shape types.
const (
	Any       = "any" // no constraint (documents, and shape 0)
	String    = "s"
	Integer   = "i" // integer and long
	Float     = "f" // float and double
	Boolean   = "b"
	Timestamp = "t"
	Blob      = "x"
	Structure = "o"
	List      = "l"
	Map       = "m"
)

// Shape is one shape of a service model, reduced to what a result is
// checked against.
type Shape struct {
	Type string `json:"t"`
	// Members of a structure, in model order, with the first letter of
	// each name in upper case as Step Functions returns them.
	Members []Member `json:"m,omitempty"`
	// Required members of a structure.
	Required []string `json:"r,omitempty"`
	// Elem is the shape of a list's items or a map's values.
	Elem int `json:"e,omitempty"`
	// Min and Max bound a number's value, or the length of a string,
	// blob, list or map.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Enum lists a string's allowed values.
	Enum []string `json:"enum,omitempty"`
}

// Member is a structure member.
type Member struct {
	Name  string `json:"n"`
	Shape int    `json:"s"`
}
