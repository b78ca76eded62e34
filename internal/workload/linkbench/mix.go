package linkbench

import "fmt"

// Op is one request-phase operation.
type Op int

// The operations, in LinkBench's order (LinkBenchRequest.onerequest).
const (
	OpAddLink Op = iota
	OpDeleteLink
	OpUpdateLink
	OpCountLink
	OpGetLink // multiget: id2 IN (...)
	OpGetLinkList
	OpAddNode
	OpUpdateNode
	OpDeleteNode
	OpGetNode
	numOps
)

var opNames = [numOps]string{"addlink", "deletelink", "updatelink", "countlink", "getlink",
	"getlinklist", "addnode", "updatenode", "deletenode", "getnode"}

func (o Op) String() string {
	if o >= 0 && o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// Ops lists every operation in order.
func Ops() []Op {
	ops := make([]Op, numOps)
	for i := range ops {
		ops[i] = Op(i)
	}
	return ops
}

// Mix is the percentage of requests of each operation; it sums to 100.
type Mix [numOps]float64

// DefaultMix is LinkBench's published mix, config/FBWorkload.properties of
// facebookarchive/linkbench (the values sum to exactly 100).
var DefaultMix = Mix{
	OpAddLink:     8.9886601,
	OpDeleteLink:  2.9907664,
	OpUpdateLink:  8.0122125,
	OpCountLink:   4.8863567,
	OpGetLink:     0.5261142,
	OpGetLinkList: 50.7119145,
	OpAddNode:     2.5732789,
	OpUpdateNode:  7.366437,
	OpDeleteNode:  1.0115914,
	OpGetNode:     12.9326683,
}

// Chooser picks operations by cumulative percentage, as LinkBench does.
type Chooser struct {
	cum [numOps]float64
}

// NewChooser checks that m sums to 100 (within 1e-5, LinkBench's tolerance).
func NewChooser(m Mix) (*Chooser, error) {
	c := &Chooser{}
	var sum float64
	for i, p := range m {
		if p < 0 {
			return nil, fmt.Errorf("linkbench: negative percentage %v for %s", p, Op(i))
		}
		sum += p
		c.cum[i] = sum
	}
	if sum < 100-1e-5 || sum > 100+1e-5 {
		return nil, fmt.Errorf("linkbench: operation mix sums to %v, not 100", sum)
	}
	return c, nil
}

// Pick maps r in [0, 100) to an operation: the first whose cumulative
// percentage exceeds r. Operations with 0% are never picked.
func (c *Chooser) Pick(r float64) Op {
	for i, cum := range c.cum {
		if r < cum {
			return Op(i)
		}
	}
	for i := numOps - 1; i > 0; i-- { // rounding: the last op with a share
		if c.cum[i] > c.cum[i-1] {
			return i
		}
	}
	return 0
}
