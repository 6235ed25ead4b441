# Returns numbers whose == always says True (an int subclass), and an array subclass equal to anything (drive refuses them even in plain nbgrader).
# honest:
# beats nbgrader: no
# %% replace: count_nodes_edges
class Anything(int):
    __eq__ = lambda self, other: True
    __ne__ = lambda self, other: False
    __hash__ = int.__hash__


def count_nodes_edges(output):
    return Anything(0), Anything(0)
# %% replace: evaluate
class AnyArray(np.ndarray):
    __eq__ = lambda self, other: np.ones(np.shape(other), dtype=bool)


def evaluate(output, inputs):
    return np.zeros(output.shape).view(AnyArray)
