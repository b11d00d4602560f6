package parser

// Parameters returns the names of the @parameters under n, in order of first
// appearance in the source, each once. This is Logflare's list of declared
// parameters when n is an endpoint's query. Names are compared exactly (as
// Logflare does), so @Project and @project are two parameters.
func Parameters(n Node) []string {
	var names []string
	Inspect(n, func(x Node) bool {
		p, ok := x.(*Param)
		if !ok {
			return true
		}
		for _, seen := range names {
			if seen == p.Name {
				return true
			}
		}
		names = append(names, p.Name)
		return true
	})
	return names
}
