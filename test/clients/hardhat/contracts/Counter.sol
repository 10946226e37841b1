// SPDX-License-Identifier: MIT
// The contract test/process/clients-hardhat.test.ts verifies through the gateway with
// `npx hardhat verify`; fixture/chain.ts holds its deployed bytecode (HARDHAT_COUNTER_CODE).
pragma solidity 0.8.37;

contract Counter {
    uint256 public count;

    function increment() external {
        count += 1;
    }
}
