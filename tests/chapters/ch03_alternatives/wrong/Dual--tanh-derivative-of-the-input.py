# tanh's derivative written 1 − a² with the input a instead of 1 − tanh(a)².
import inspect

from minigrad import dual

exec(inspect.getsource(dual.Dual).replace('(1.0 - value * value)', '(1.0 - self.primal * self.primal)'), namespace := {**vars(dual)})
Dual = namespace["Dual"]
