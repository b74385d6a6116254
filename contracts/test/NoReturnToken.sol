// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @notice Test token shaped like Tether's USDT on Ethereum: `transfer`, `transferFrom` and `approve` return
/// nothing, `approve` refuses to change a non-zero allowance to another non-zero one, and an allowance of
/// 2^256 - 1 is never lowered. Anyone mints.
contract NoReturnToken {
    uint256 private constant _MAX = type(uint256).max;

    mapping(address account => uint256) public balanceOf;
    mapping(address owner => mapping(address spender => uint256)) public allowance;
    uint256 public totalSupply;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error InsufficientAllowance();
    error InsufficientBalance();
    error ApproveFromNonZero();

    function decimals() external pure returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 value) external {
        _move(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) external {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed < value) revert InsufficientAllowance();
        if (allowed < _MAX) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
    }

    function approve(address spender, uint256 value) external {
        if (value != 0 && allowance[msg.sender][spender] != 0) revert ApproveFromNonZero();
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    function _move(address from, address to, uint256 value) private {
        if (balanceOf[from] < value) revert InsufficientBalance();
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
