"""The search engine on a fixed tree structure: the prepared problem and its
disjunctive inequalities (paper §2-3), the error functions, the block simplex and
the tree walker that ``tabu.search`` drives (paper §4-5), crossover to a vertex,
robust LPs, Frank-Wolfe, the starting points, and the restart portfolio.
Private modules; the learners in :mod:`gto.learners` are its users."""
