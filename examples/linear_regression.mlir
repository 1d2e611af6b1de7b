// A training run written directly in StableHLO, for `oxla run` until oxla's
// own tracing and autodiff produce such programs: full-batch gradient descent
// on a linear model y = x.w + b, over 256 samples of 4 features made in the
// program itself (x[i, j] = sin(0.37 (j + 1) i + j); the targets come from
// w* = [1.5, -2, 0.5, 3], b* = 0.7). 300 steps, learning rate 0.3.
//
// Returns (w, b, loss before training, loss after training).
module @linear_regression {
  func.func private @mse(%x: tensor<256x4xf32>, %y: tensor<256xf32>, %w: tensor<4xf32>, %b: tensor<f32>) -> tensor<f32> {
    %err = call @residual(%x, %y, %w, %b) : (tensor<256x4xf32>, tensor<256xf32>, tensor<4xf32>, tensor<f32>) -> tensor<256xf32>
    %sq = stablehlo.multiply %err, %err : tensor<256xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %sum = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<256xf32>, tensor<f32>) -> tensor<f32>
    %n = stablehlo.constant dense<256.0> : tensor<f32>
    %mean = stablehlo.divide %sum, %n : tensor<f32>
    return %mean : tensor<f32>
  }

  // x.w + b - y
  func.func private @residual(%x: tensor<256x4xf32>, %y: tensor<256xf32>, %w: tensor<4xf32>, %b: tensor<f32>) -> tensor<256xf32> {
    %xw = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<256x4xf32>, tensor<4xf32>) -> tensor<256xf32>
    %bb = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<256xf32>
    %pred = stablehlo.add %xw, %bb : tensor<256xf32>
    %err = stablehlo.subtract %pred, %y : tensor<256xf32>
    return %err : tensor<256xf32>
  }

  func.func public @main() -> (tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>) {
    %i = stablehlo.iota dim = 0 : tensor<256x4xf32>
    %j = stablehlo.iota dim = 1 : tensor<256x4xf32>
    %one = stablehlo.constant dense<1.0> : tensor<256x4xf32>
    %base = stablehlo.constant dense<0.37> : tensor<256x4xf32>
    %j1 = stablehlo.add %j, %one : tensor<256x4xf32>
    %freq = stablehlo.multiply %j1, %base : tensor<256x4xf32>
    %phase = stablehlo.multiply %freq, %i : tensor<256x4xf32>
    %arg = stablehlo.add %phase, %j : tensor<256x4xf32>
    %x = stablehlo.sine %arg : tensor<256x4xf32>
    %w_true = stablehlo.constant dense<[1.5, -2.0, 0.5, 3.0]> : tensor<4xf32>
    %b_true = stablehlo.constant dense<0.7> : tensor<f32>
    %zeros = stablehlo.constant dense<0.0> : tensor<256xf32>
    // y = x.w* + b* (the residual against zero targets)
    %y = call @residual(%x, %zeros, %w_true, %b_true) : (tensor<256x4xf32>, tensor<256xf32>, tensor<4xf32>, tensor<f32>) -> tensor<256xf32>

    %w0 = stablehlo.constant dense<0.0> : tensor<4xf32>
    %b0 = stablehlo.constant dense<0.0> : tensor<f32>
    %step0 = stablehlo.constant dense<0> : tensor<i32>
    %loss_before = call @mse(%x, %y, %w0, %b0) : (tensor<256x4xf32>, tensor<256xf32>, tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %final:5 = stablehlo.while(%step = %step0, %w = %w0, %b = %b0, %xs = %x, %ys = %y) : tensor<i32>, tensor<4xf32>, tensor<f32>, tensor<256x4xf32>, tensor<256xf32>
      cond {
        %steps = stablehlo.constant dense<300> : tensor<i32>
        %more = stablehlo.compare LT, %step, %steps, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %more : tensor<i1>
      } do {
        // d(mean squared error)/dw = 2/N x^T err, d/db = 2/N sum(err)
        %err = func.call @residual(%xs, %ys, %w, %b) : (tensor<256x4xf32>, tensor<256xf32>, tensor<4xf32>, tensor<f32>) -> tensor<256xf32>
        %gw = stablehlo.dot_general %err, %xs, contracting_dims = [0] x [0] : (tensor<256xf32>, tensor<256x4xf32>) -> tensor<4xf32>
        %zero = stablehlo.constant dense<0.0> : tensor<f32>
        %gb = stablehlo.reduce(%err init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<256xf32>, tensor<f32>) -> tensor<f32>
        // learning rate 0.3 times 2/N
        %scale = stablehlo.constant dense<0.00234375> : tensor<f32>
        %scale4 = stablehlo.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<4xf32>
        %dw = stablehlo.multiply %gw, %scale4 : tensor<4xf32>
        %db = stablehlo.multiply %gb, %scale : tensor<f32>
        %w_next = stablehlo.subtract %w, %dw : tensor<4xf32>
        %b_next = stablehlo.subtract %b, %db : tensor<f32>
        %inc = stablehlo.constant dense<1> : tensor<i32>
        %step_next = stablehlo.add %step, %inc : tensor<i32>
        stablehlo.return %step_next, %w_next, %b_next, %xs, %ys : tensor<i32>, tensor<4xf32>, tensor<f32>, tensor<256x4xf32>, tensor<256xf32>
      }
    %loss_after = call @mse(%x, %y, %final#1, %final#2) : (tensor<256x4xf32>, tensor<256xf32>, tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %final#1, %final#2, %loss_before, %loss_after : tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>
  }
}
